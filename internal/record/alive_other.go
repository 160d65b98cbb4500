//go:build !linux && !darwin && !windows

package record

import "syscall"

// Without a portable way to read a process name, a live PID counts.
func processIsInstaller(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
