//go:build unix

package evolve

import (
	"os/exec"
	"syscall"
)

// setProcessGroup runs cmd in its own process group and kills the whole
// group on cancellation, so an eval script's children cannot outlive it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
