package runner

import (
	"errors"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// parentDeathKills: the kernel ends ctrld when ctrld-install dies, so a
// command whose leftovers do not matter needs no watcher.
const parentDeathKills = true

// setParentDeathSignal has the kernel SIGKILL ctrld when the thread that
// started it ends; run keeps that thread for ctrld's whole life, so that is
// when ctrld-install dies, however it dies. It reaches ctrld alone, not what
// ctrld started: that is the watcher's work.
func setParentDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }

// awaitExit waits until ctrld has exited, without reaping it, and settles
// the group then: ctrld, unreaped, keeps the group's ID reserved even when
// it leads the group itself, and a watcher that is told to stand down as
// soon as ctrld exits does not kill the daemon should ctrld-install die
// while ctrld's output drains.
func awaitExit(g *group, cmd *exec.Cmd) {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err == nil {
			g.settle(cmd)
		}
		// Any other error leaves the settling to finish, after the reap.
		return
	}
}
