//go:build windows

package standin

import "os"

func pgid() int                    { return 0 }
func signalPIDFile(string, string) {}

func signalPID(pid int, _ string) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
