//go:build unix

package runner

import (
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// readyTimeout bounds the wait for a watcher to say it is in place. A
// watcher that is not ready by then is ended and the run goes on without.
const readyTimeout = 2 * time.Second

// ready is the byte a watcher writes once it watches.
const ready = 'R'

// watcher is the parent's side of a running watcher.
type watcher struct {
	cmd *exec.Cmd
	// life is the write end of the watcher's stdin. Nothing is ever written:
	// the kernel closes it when ctrld-install ends, however it ends, and the
	// watcher reads EOF. It is close-on-exec, so ctrld never holds it open.
	life *os.File
}

// startWatcher starts exe, this program's executable, as a watcher leading a
// new process group and waits until it watches, at most wait. It returns nil
// when that fails; ctrld then leads its own group and runs unwatched.
//
// The watcher is started before ctrld and ctrld joins its group, rather than
// the other way round, so ctrld never runs for a moment without one, and the
// group's ID stays reserved by the watcher after ctrld has been reaped. The
// watcher does not start ctrld itself: ctrld's argv, with the token, never
// passes through it, and ctrld stays ctrld-install's child, whose exit
// status and output pipe os/exec handles as for any child.
func startWatcher(exe string, grace, wait time.Duration) *watcher {
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		lifeR.Close()
		lifeW.Close()
		return nil
	}
	defer readyR.Close()
	cmd := &exec.Cmd{
		Path:   exe,
		Args:   []string{os.Args[0], watcherArg, strconv.Itoa(os.Getpid()), grace.String()},
		Env:    []string{watcherEnv + "=1"},
		Dir:    "/", // hold no directory busy
		Stdin:  lifeR,
		Stdout: readyW,
		// The watcher leads a new group: outside ctrld-install's, so a kill
		// of that group spares it; and ctrld's, since ctrld joins it.
		SysProcAttr: watcherSysProcAttr(),
	}
	err = cmd.Start()
	lifeR.Close()
	readyW.Close()
	if err != nil {
		lifeW.Close()
		return nil
	}
	w := &watcher{cmd: cmd, life: lifeW}
	var b [1]byte
	_ = readyR.SetReadDeadline(time.Now().Add(wait))
	if n, _ := readyR.Read(b[:]); n != 1 || b[0] != ready {
		_ = cmd.Process.Kill()
		w.reap()
		return nil
	}
	return w
}

func (w *watcher) pid() int { return w.cmd.Process.Pid }

// reap waits for the watcher, which the group's SIGKILL has ended.
func (w *watcher) reap() {
	_ = w.cmd.Wait()
	w.life.Close()
}

// watcherMain is the watcher: args are ctrld-install's PID and the grace
// period. It ignores the signals meant for ctrld's group, says it is ready,
// and waits for ctrld-install to be gone. While ctrld-install lives it is
// ended by the group's SIGKILL with ctrld's leftovers.
func watcherMain(args []string) int {
	if len(args) != 2 {
		return 2
	}
	parent, err := strconv.Atoi(args[0])
	if err != nil || parent < 1 {
		return 2
	}
	grace, err := time.ParseDuration(args[1])
	if err != nil || grace <= 0 {
		grace = DefaultGrace
	}
	// The watcher signals its own group; leading it is what makes that
	// group ctrld's and not the caller's.
	if syscall.Getpgrp() != os.Getpid() {
		return 2
	}
	// SIGTERM is how ctrld-install stops ctrld's group; the watcher must
	// outlive it to finish the job should ctrld-install die in the grace
	// period. SIGINT and SIGHUP reach a group from a terminal.
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)

	var once sync.Once
	gone := make(chan struct{})
	parentGone := func() { once.Do(func() { close(gone) }) }
	go func() {
		// EOF: every copy of the write end is closed, and ctrld-install
		// held the only one.
		_, _ = io.Copy(io.Discard, os.Stdin)
		parentGone()
	}()
	// A second, per-system notice of the parent's death, in case the pipe
	// is held open some way this code did not foresee.
	watchParent(parent, parentGone)
	// A parent that died before watchParent looked has already left us to
	// init or a subreaper.
	if os.Getppid() != parent {
		parentGone()
	}
	// Only now may ctrld start: every signal meant for the group is handled.
	if _, err := os.Stdout.Write([]byte{ready}); err != nil {
		return 2
	}
	os.Stdout.Close()

	<-gone
	_ = syscall.Kill(0, syscall.SIGTERM)
	time.Sleep(grace)
	_ = syscall.Kill(0, syscall.SIGKILL) // the watcher too
	return 0
}
