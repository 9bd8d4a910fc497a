//go:build linux

package bolt

import (
	"sync"
	"syscall"
	"time"
	"unsafe"

	bbolt "go.etcd.io/bbolt"
)

// trimEvery is how often a long read on a large file drops the pages it has
// faulted into its mapping (see trimMapping).
const trimEvery = 20 * time.Millisecond

// trimMinSize is the smallest file whose reads are trimmed: below it the
// whole mapping is small next to the heap.
const trimMinSize = 8 << 20

// trimMapping bounds what a read transaction on a large file keeps
// resident: every trimEvery, until the returned stop, it tells the kernel
// (madvise MADV_DONTNEED) that the mapping's pages are not needed. The
// mapping is bbolt's read-only MAP_SHARED map of the file, so nothing is
// lost: a page touched again is mapped again from the page cache (a minor
// fault), and the bytes the reader holds pointers into stay the file's.
// Without it, a read that visits records spread over the file (an agent's
// candidates and their ledger entries, the ledger chain check) faults in,
// with the kernel's fault-around, most of the file, and each open store
// handle maps it once more: ten such reads at once counted ten times the
// file in the process's RSS. The range is the transaction's size (its high
// water mark), which the mapping covers while the transaction is open (the
// reader's shared lock keeps writers from growing the file). stop ends
// the trims (none runs after it returns), so it must run before the
// transaction ends and the database is closed; it does not trim itself:
// the store closes the database right after (munmap drops every page),
// and a last madvise over a 1.6 GB mapping was a tenth of a short read.
func trimMapping(tx *bbolt.Tx) (stop func()) {
	return trimMappingEvery(tx, trimEvery, trimMinSize, dontNeed)
}

// trimMappingEvery is trimMapping with its interval, threshold and trim.
func trimMappingEvery(tx *bbolt.Tx, every time.Duration, minSize int64, trim func(addr uintptr, size int64)) (stop func()) {
	size := tx.Size()
	if size < minSize {
		return func() {}
	}
	addr := tx.DB().Info().Data
	if addr == 0 {
		return func() {}
	}
	// A timer, not a goroutine waiting on a ticker: a read shorter than
	// every starts nothing, and stop does not wait for a parked goroutine
	// to wake up and exit (tens of microseconds on a read of a large file).
	// mu orders the trims with stop, so none runs after stop returns.
	var mu sync.Mutex
	stopped := false
	mu.Lock()
	var t *time.Timer
	t = time.AfterFunc(every, func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		trim(addr, size)
		t.Reset(every)
	})
	mu.Unlock()
	return func() {
		mu.Lock()
		stopped = true
		t.Stop()
		mu.Unlock()
	}
}

// pageEvery is how many values a long loop of a read visits between two
// looks at the process's file-backed resident memory (see pager).
const pageEvery = 256

// pageGrowth is how much the process's file-backed resident memory may grow
// within a loop before its pager drops the mapping's pages.
const pageGrowth = 4 << 20

// pager is trimMapping for one loop of a read transaction, by the values it
// visits instead of by time: a loop that visits records spread over the
// file (an agent's candidates, their ledger entries) faults in, with the
// kernel's fault-around, up to 64 KiB per value, tens of megabytes between
// two ticks of the timer. Every pageEvery values it reads the process's
// file-backed resident size (/proc/self/statm) and, when that grew by
// pageGrowth or more since the last trim, drops the mapping's pages; so a
// loop keeps at most about pageGrowth plus pageEvery values' pages
// resident. It looks before it trims because a trim is one madvise over the
// whole mapping, about a millisecond on a 1.6 GB file: trimming every
// pageEvery values made a walk of an index that stays on a few pages (the
// candidates of an agent with none, among 1M records) take 1.8 s instead
// of 0.2 s. Where statm cannot be read it trims every pageEvery values.
// The zero pager, and the pager of a small file or of a write transaction
// (whose pages bbolt may be writing), does nothing.
type pager struct {
	addr uintptr
	size int64
	n    int
	// base is the file-backed resident bytes after the last trim (or at
	// the start), -1 when statm could not be read.
	base int64
	// trims counts the trims (tests).
	trims int
}

// newPager is the pager of a loop in tx.
func newPager(tx *bbolt.Tx) pager {
	size := tx.Size()
	if tx.Writable() || size < trimMinSize {
		return pager{}
	}
	return pager{addr: tx.DB().Info().Data, size: size, base: fileResident()}
}

// mappingPager is the pager of a loop over data, a read-only mapping of
// the file made outside bbolt (the page check's); a small one is not
// trimmed.
func mappingPager(data []byte) pager {
	if int64(len(data)) < trimMinSize {
		return pager{}
	}
	return pager{addr: uintptr(unsafe.Pointer(unsafe.SliceData(data))), size: int64(len(data)), base: fileResident()}
}

// step counts one value visited.
func (p *pager) step() {
	if p.addr == 0 {
		return
	}
	if p.n++; p.n%pageEvery != 0 {
		return
	}
	if p.base >= 0 {
		now := fileResident()
		if now >= 0 && now-p.base < pageGrowth {
			return
		}
	}
	dontNeed(p.addr, p.size)
	p.trims++
	if p.base >= 0 {
		p.base = fileResident()
	}
}

// fileResident is the process's file-backed resident memory in bytes
// (the third field of /proc/self/statm, in pages), -1 when it cannot be
// read.
func fileResident() int64 {
	var buf [128]byte
	fd, err := syscall.Open("/proc/self/statm", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	n, err := syscall.Read(fd, buf[:])
	_ = syscall.Close(fd)
	if err != nil || n <= 0 {
		return -1
	}
	field, v, digits := 0, int64(0), false
	for _, c := range buf[:n] {
		switch {
		case c >= '0' && c <= '9':
			v, digits = v*10+int64(c-'0'), true
		case digits:
			if field == 2 {
				return v * int64(syscall.Getpagesize())
			}
			field, v, digits = field+1, 0, false
		}
	}
	if field == 2 && digits {
		return v * int64(syscall.Getpagesize())
	}
	return -1
}

func dontNeed(addr uintptr, size int64) {
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, addr, uintptr(size), syscall.MADV_DONTNEED)
}
