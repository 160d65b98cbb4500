//go:build unix

package runner

import (
	_ "embed"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The watcher exists so that nothing of ctrld outlives ctrld-install. It
// leads ctrld's process group, outside ctrld-install's own, so a SIGKILL of
// ctrld-install or of its whole group does not reach it; it learns that
// ctrld-install is gone while ctrld runs and ends the group (SIGTERM, the
// grace period, SIGKILL). Once ctrld has exited by itself it is told to
// stand down and exits, leaving the group to whatever a service manager
// started in it. It never sees ctrld's arguments or environment, so never
// the token. Windows needs none: a job object ends ctrld with ctrld-install.
//
// It is the POSIX shell running watcher.sh: a shell starts in a fraction of
// the time a Go program takes, and the watcher is started for every command
// that changes the device. Its argv[0] is watcherName and its process name
// the shell's: nothing that matches ctrld-install by name (`pkill -f
// ctrld-install`, `pkill ctrld-install`) reaches it.
const (
	watcherName  = "ctrld-watcher"
	watcherShell = "/bin/sh"
	// watcherPath is all the script needs: sleep.
	watcherPath = "PATH=/usr/bin:/bin"
)

//go:embed watcher.sh
var watcherScript string

// watcherCommand is watcher.sh without its comments and blank lines: the
// script is the watcher's argv, which ps shows and pkill -f matches.
var watcherCommand = func() string {
	var b strings.Builder
	for _, l := range strings.Split(watcherScript, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}()

// readyTimeout bounds the wait for a watcher to say it is in place. A
// watcher that is not ready by then is ended and the run goes on without.
const readyTimeout = 2 * time.Second

// ready is the byte a watcher writes once it watches.
const ready = 'R'

// What ctrld-install writes on the watcher's stdin, a line each. Arming
// carries the grace period, so that a watcher started ahead of time serves
// any command.
const (
	msgArm   = "G" // followed by the grace period in seconds: ctrld is joining the group
	msgStand = "D" // ctrld exited by itself: exit, and leave the group alone
)

// watcher is the parent's side of a running watcher.
type watcher struct {
	cmd *exec.Cmd
	// life is the write end of the watcher's stdin: the messages above, and
	// the end of ctrld-install. The kernel closes it when ctrld-install
	// ends, however it ends, and the watcher reads EOF. It is close-on-exec
	// and ctrld-install holds the only copy, so neither ctrld nor anything
	// else holds it open.
	life *os.File
	// ready is the read end of the watcher's stdout, which it writes the
	// ready byte to and then holds open: its end says the watcher is gone.
	ready *os.File
	once  sync.Once
}

// The spare watcher, started ahead of the command that needs it (see
// [Prestart]), so that its start overlaps what the run does before.
var spare struct {
	mu      sync.Mutex
	pending bool          // asked for; launched once the next ctrld command has started
	ch      chan *watcher // nil when there is none; receives nil when it failed
}

// Prestart asks for a watcher for the next command that needs one. It is
// started right after the next ctrld command has started, so that it comes
// up while that command runs (ctrld --version) instead of adding to the
// run, and its fork does not contend with that command's. A program calls
// it before its first ctrld command. It does nothing when a spare is asked
// for or there already.
func Prestart() {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if spare.ch == nil {
		spare.pending = true
	}
}

// launchSpare starts the watcher Prestart asked for, in the background.
func launchSpare() {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	if !spare.pending || spare.ch != nil {
		return
	}
	spare.pending = false
	ch := make(chan *watcher, 1)
	spare.ch = ch
	go func() { ch <- startWatcher(watcherShell, readyTimeout) }()
}

// takeWatcher returns the spare watcher, or starts one, waiting at most
// wait. It returns nil when no watcher could be had; ctrld then leads its
// own group and runs unwatched. Off Linux, where brief commands are watched
// too, it asks for the next spare at once.
func takeWatcher(wait time.Duration) *watcher {
	spare.mu.Lock()
	ch := spare.ch
	spare.ch = nil
	spare.pending = false
	spare.mu.Unlock()
	if !parentDeathKills {
		defer Prestart()
	}
	if ch == nil {
		return startWatcher(watcherShell, wait)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case w := <-ch:
		// A spare someone killed meanwhile (`killall sh`) would leave ctrld
		// unwatched in its group: start another.
		if w != nil && !w.alive() {
			w.reap()
			return startWatcher(watcherShell, wait)
		}
		return w
	case <-t.C:
		// Not ready in time: it ends itself unarmed once ready, or is
		// ended by startWatcher's own deadline.
		go func() {
			if w := <-ch; w != nil {
				w.standDown()
				w.reap()
			}
		}()
		return nil
	}
}

// startWatcher starts shell running watcher.sh, leading a new process
// group, and waits until it watches, at most wait. It returns nil when that
// fails.
//
// The watcher is started before ctrld and ctrld joins its group, rather than
// the other way round, so ctrld never runs for a moment without one, and the
// group's ID stays reserved by the watcher after ctrld has been reaped. The
// watcher does not start ctrld itself: ctrld's argv, with the token, never
// passes through it, and ctrld stays ctrld-install's child, whose exit
// status and output pipe os/exec handles as for any child.
func startWatcher(shell string, wait time.Duration) *watcher {
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
	cmd := &exec.Cmd{
		Path: shell,
		Args: []string{watcherName, "-c", watcherCommand},
		// Nothing of the caller's: no ENV or BASH_ENV for the shell to
		// read, and a PATH of system directories for sleep.
		Env:    []string{watcherPath},
		Dir:    "/", // hold no directory busy
		Stdin:  lifeR,
		Stdout: readyW,
		// The watcher leads a new group: outside ctrld-install's, so a kill
		// of that group spares it; and ctrld's, since ctrld joins it.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	err = cmd.Start()
	lifeR.Close()
	readyW.Close()
	if err != nil {
		lifeW.Close()
		readyR.Close()
		return nil
	}
	w := &watcher{cmd: cmd, life: lifeW, ready: readyR}
	var b [1]byte
	_ = readyR.SetReadDeadline(time.Now().Add(wait))
	if n, _ := readyR.Read(b[:]); n != 1 || b[0] != ready {
		_ = cmd.Process.Kill()
		w.reap()
		return nil
	}
	return w
}

// alive reports whether the watcher still runs: its stdout has not ended.
// A dead one, unreaped, would still hold its group, and ctrld would join
// it and run unwatched.
func (w *watcher) alive() bool {
	rc, err := w.ready.SyscallConn()
	if err != nil {
		return false
	}
	alive := false
	// One non-blocking read, at once: nothing to read is a live watcher,
	// the end of the pipe a dead one.
	_ = rc.Read(func(fd uintptr) bool {
		var b [1]byte
		_, err := syscall.Read(int(fd), b[:])
		alive = errors.Is(err, syscall.EAGAIN)
		return true
	})
	return alive
}

func (w *watcher) pid() int { return w.cmd.Process.Pid }

// arm tells the watcher that ctrld is about to join its group, and the
// grace period to give the group should ctrld-install die.
func (w *watcher) arm(grace time.Duration) {
	_, _ = w.life.WriteString(msgArm + strconv.FormatFloat(grace.Seconds(), 'f', -1, 64) + "\n")
}

// standDown tells the watcher to leave the group alone and exit.
func (w *watcher) standDown() {
	w.once.Do(func() {
		_, _ = w.life.WriteString(msgStand + "\n")
		w.life.Close()
	})
}

// killed is called once the group's SIGKILL has ended the watcher.
func (w *watcher) killed() { w.once.Do(func() { w.life.Close() }) }

// reap waits for the watcher, which has exited or been killed.
func (w *watcher) reap() {
	_ = w.cmd.Wait()
	w.once.Do(func() { w.life.Close() })
	w.ready.Close()
}
