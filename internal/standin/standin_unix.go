//go:build unix

package standin

import (
	"os"
	"syscall"
)

// SignalParent sends sig ("TERM", "INT") to the parent, as an MDM agent's
// time limit would.
func SignalParent(sig string) { Signal(os.Getppid(), sig) }

// Signal sends sig ("TERM", "INT") to pid.
func Signal(pid int, sig string) {
	s := syscall.SIGTERM
	if sig == "INT" {
		s = syscall.SIGINT
	}
	_ = syscall.Kill(pid, s)
}
