//go:build windows

package runner

import "os/exec"

// Windows has no process groups that signals reach; the child is killed
// directly and WaitDelay closes pipes a leftover process still holds.
func setProcessGroup(*exec.Cmd) {}

func terminate(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
