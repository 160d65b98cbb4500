//go:build windows

package standin

import "os"

// SignalParent ends the parent, as an MDM agent's time limit would:
// Windows has no SIGTERM for another process.
func SignalParent(sig string) { Signal(os.Getppid(), sig) }

// Signal ends pid.
func Signal(pid int, _ string) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
