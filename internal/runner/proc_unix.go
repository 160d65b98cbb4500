//go:build unix

package runner

import (
	"os/exec"
	"syscall"
)

// group is ctrld's process group, whose ID is ctrld's PID.
type group struct{}

func newGroup(cmd *exec.Cmd) *group {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return &group{}
}

// started has nothing to do: the group exists from the fork.
func (*group) started(*exec.Cmd) {}

// terminate asks ctrld's whole process group to stop.
func (*group) terminate(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
}

// kill ends ctrld's whole process group. After ctrld is reaped the group
// lives on only while a member does, and its ID cannot be reused until then.
func (*group) kill(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
