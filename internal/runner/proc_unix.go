//go:build unix

package runner

import (
	"context"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// group is ctrld's process group. With a watcher its ID is the watcher's
// PID and ctrld joins it; without one (a brief command on Linux, or the
// watcher could not start) ctrld leads a group of its own.
type group struct {
	w *watcher // nil without a watcher; set before ctrld starts

	// brief: what is left of the group when ctrld exits is killed. Set
	// before ctrld starts.
	brief bool

	mu       sync.Mutex
	stopped  bool // terminate or kill ran: the time limit or a signal stopped ctrld
	settled  bool // the group was killed or left alone; nothing signals it after
	left     bool // settled by leaving it alone: the watcher stood down
	finished bool // finish ran
}

func newGroup(ctx context.Context, cmd *exec.Cmd, grace time.Duration, watch bool) *group {
	g := &group{}
	if watch {
		wait := readyTimeout
		if d, ok := ctx.Deadline(); ok {
			wait = min(wait, time.Until(d))
		}
		// Started here, when the command needs it, and not ahead: a watcher
		// that waited for a command would need its own life cycle.
		g.w = startWatcher(watcherShell, wait)
	}
	attr := &syscall.SysProcAttr{Setpgid: true}
	setParentDeathSignal(attr)
	if g.w != nil {
		attr.Pgid = g.w.pid()
		// Armed before ctrld exists: should ctrld-install die at any moment
		// from here on, the watcher ends the group.
		g.w.arm(grace)
	}
	cmd.SysProcAttr = attr
	return g
}

// killAfterExit marks a brief command, whose leftovers do not outlive it.
func killAfterExit(g *group, brief bool) { g.brief = brief }

// started has nothing to do: the group exists from ctrld's fork.
func (*group) started(*exec.Cmd) {}

// id is the group's ID, 0 while there is no group. It never changes once
// ctrld has started, so os/exec's goroutine may read it.
func (g *group) id(cmd *exec.Cmd) int {
	if g.w != nil {
		return g.w.pid()
	}
	if cmd.Process == nil {
		return 0
	}
	return cmd.Process.Pid
}

// signalLocked sends sig to the whole group; g.mu is held. The group's ID
// cannot be reused while a member is left unreaped: the watcher, reaped only
// by finish, or ctrld, which settle runs before on Linux.
func (g *group) signalLocked(cmd *exec.Cmd, sig syscall.Signal) error {
	id := g.id(cmd)
	// kill(0) or kill(-1) would reach ctrld-install's group or every process.
	if g.settled || id <= 1 {
		return nil
	}
	return syscall.Kill(-id, sig)
}

// terminate asks ctrld's whole process group to stop. The watcher ignores
// SIGTERM and stays until the group is killed.
func (g *group) terminate(cmd *exec.Cmd) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.settled {
		g.stopped = true
	}
	return g.signalLocked(cmd, syscall.SIGTERM)
}

// settle decides the group's fate once ctrld has exited: killed when ctrld
// was stopped (the time limit, a signal) or the command is brief, left alone
// when ctrld exited by itself, since a service manager may have started the
// daemon in it. The watcher of a group left alone stands down. Nothing
// signals the group after this.
func (g *group) settle(cmd *exec.Cmd) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.settled {
		return
	}
	kill := g.stopped || g.brief || cmd.Process == nil
	if kill {
		_ = g.signalLocked(cmd, syscall.SIGKILL)
	}
	g.settled, g.left = true, !kill
	if g.w != nil {
		if kill {
			g.w.killed()
		} else {
			g.w.standDown()
		}
	}
}

// finish settles the group if that was not done before ctrld was reaped,
// and reaps the watcher. A watcher that stood down is exiting by itself
// and is reaped in the background: nothing signals its group again, and
// waiting for its exit would only add to the run.
func (g *group) finish(cmd *exec.Cmd) {
	g.settle(cmd)
	g.mu.Lock()
	done := g.finished
	g.finished = true
	stood := g.left
	g.mu.Unlock()
	if g.w == nil || done {
		return
	}
	if stood {
		go g.w.reap()
		return
	}
	g.w.reap()
}
