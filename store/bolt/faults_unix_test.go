//go:build unix

package bolt

import "syscall"

// pageFaults is the number of page faults the process has taken so far
// (minor and major), for benchmarks that report faults per operation.
func pageFaults() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return int64(ru.Minflt) + int64(ru.Majflt), true
}
