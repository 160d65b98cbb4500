//go:build unix

package runner

import (
	"context"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// group is ctrld's process group. With a watcher its ID is the watcher's
// PID and ctrld joins it; without one (the watcher could not start) ctrld
// leads a group of its own, as before watchers existed.
type group struct {
	w *watcher // nil without a watcher; set before ctrld starts

	mu       sync.Mutex
	finished bool // finish ran: the group's ID may name someone else now
}

func newGroup(ctx context.Context, cmd *exec.Cmd, grace time.Duration, watch bool) *group {
	g := &group{}
	if watch {
		wait := readyTimeout
		if d, ok := ctx.Deadline(); ok {
			wait = min(wait, time.Until(d))
		}
		if exe, err := os.Executable(); err == nil {
			g.w = startWatcher(exe, grace, wait)
		}
	}
	attr := &syscall.SysProcAttr{Setpgid: true}
	if g.w != nil {
		attr.Pgid = g.w.pid()
	}
	cmd.SysProcAttr = attr
	return g
}

// started has nothing to do: the group exists from the fork.
func (*group) started(*exec.Cmd) {}

// id is the group's ID, 0 while there is no group. It never changes once
// ctrld has started, so os/exec's goroutine and the kill timer may read it.
func (g *group) id(cmd *exec.Cmd) int {
	if g.w != nil {
		return g.w.pid()
	}
	if cmd.Process == nil {
		return 0
	}
	return cmd.Process.Pid
}

// signal sends sig to the whole group. The group's ID cannot be reused
// while a member, the watcher or ctrld unreaped, is left, and finish is
// the only place either is reaped.
func (g *group) signal(cmd *exec.Cmd, sig syscall.Signal) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	id := g.id(cmd)
	// kill(0) or kill(-1) would reach ctrld-install's group or every process.
	if g.finished || id <= 1 {
		return nil
	}
	return syscall.Kill(-id, sig)
}

// terminate asks ctrld's whole process group to stop. The watcher ignores
// SIGTERM and stays until finish.
func (g *group) terminate(cmd *exec.Cmd) error { return g.signal(cmd, syscall.SIGTERM) }

// kill ends ctrld's whole process group, the watcher with it.
func (g *group) kill(cmd *exec.Cmd) { _ = g.signal(cmd, syscall.SIGKILL) }

// finish ends what is left of the group once ctrld has been waited for, or
// failed to start, and reaps the watcher. After it nothing signals the
// group's ID, a late kill timer included.
func (g *group) finish(cmd *exec.Cmd) {
	g.kill(cmd)
	g.mu.Lock()
	g.finished = true
	g.mu.Unlock()
	if g.w != nil {
		g.w.reap()
	}
}
