//go:build !unix

package evolve

import "os/exec"

// setProcessGroup is a no-op where process groups are not available; the
// command itself is killed on cancellation.
func setProcessGroup(*exec.Cmd) {}
