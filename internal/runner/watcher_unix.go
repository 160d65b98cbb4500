//go:build unix

package runner

import (
	"bufio"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// readyTimeout bounds the wait for a watcher to say it is in place. A
// watcher that is not ready by then is ended and the run goes on without.
const readyTimeout = 2 * time.Second

// ready is the byte a watcher writes once it watches.
const ready = 'R'

// What ctrld-install writes on the watcher's stdin. Arming carries the
// grace period, so that a watcher started ahead of time serves any command.
const (
	msgArm   = 'G' // followed by the grace period and a newline: ctrld is joining the group
	msgStand = 'D' // ctrld exited by itself: exit, and leave the group alone
)

// standDownWait is how long a watcher woken by a second notice of its
// parent's death waits for the pipe to say what the parent last wrote: a
// parent that stood the watcher down and then died must not have the
// group killed.
const standDownWait = 200 * time.Millisecond

// watcher is the parent's side of a running watcher.
type watcher struct {
	cmd *exec.Cmd
	// life is the write end of the watcher's stdin: the messages above, and
	// the end of ctrld-install. The kernel closes it when ctrld-install
	// ends, however it ends, and the watcher reads EOF. It is close-on-exec,
	// so ctrld never holds it open.
	life *os.File
	once sync.Once
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
// for or there already, or when Run would use no watcher (a program
// without the hook, see [IsWatcher]).
func Prestart() {
	if !watcherHooked.Load() {
		return
	}
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
	go func() { ch <- launchWatcher(readyTimeout) }()
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
		return launchWatcher(wait)
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case w := <-ch:
		return w
	case <-t.C:
		// Not ready in time: it ends itself unarmed once ready, or is
		// ended by launchWatcher's own deadline.
		go func() {
			if w := <-ch; w != nil {
				w.standDown()
				w.reap()
			}
		}()
		return nil
	}
}

// launchWatcher starts this program's executable as a watcher.
func launchWatcher(wait time.Duration) *watcher {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	return startWatcher(exe, wait)
}

// startWatcher starts exe, this program's executable, as a watcher leading a
// new process group and waits until it watches, at most wait. It returns nil
// when that fails.
//
// The watcher is started before ctrld and ctrld joins its group, rather than
// the other way round, so ctrld never runs for a moment without one, and the
// group's ID stays reserved by the watcher after ctrld has been reaped. The
// watcher does not start ctrld itself: ctrld's argv, with the token, never
// passes through it, and ctrld stays ctrld-install's child, whose exit
// status and output pipe os/exec handles as for any child.
//
// Its argv[0] is [watcherName], not ctrld-install's: `pkill -f ctrld-install`
// must not kill the one process that would end ctrld's group after it.
func startWatcher(exe string, wait time.Duration) *watcher {
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
		Args:   []string{watcherName, watcherArg, strconv.Itoa(os.Getpid())},
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

// arm tells the watcher that ctrld is about to join its group, and the
// grace period to give the group should ctrld-install die.
func (w *watcher) arm(grace time.Duration) {
	_, _ = w.life.WriteString(string(rune(msgArm)) + grace.String() + "\n")
}

// standDown tells the watcher to leave the group alone and exit.
func (w *watcher) standDown() {
	w.once.Do(func() {
		_, _ = w.life.Write([]byte{msgStand})
		w.life.Close()
	})
}

// killed is called once the group's SIGKILL has ended the watcher.
func (w *watcher) killed() { w.once.Do(func() { w.life.Close() }) }

// reap waits for the watcher, which has exited or been killed.
func (w *watcher) reap() {
	_ = w.cmd.Wait()
	w.once.Do(func() { w.life.Close() })
}

// watcherMain is the watcher: args is ctrld-install's PID. It ignores the
// signals meant for ctrld's group, says it is ready, and waits. Told to
// stand down, it exits; ctrld-install gone while it is armed, it ends the
// group. While ctrld-install lives and ctrld is stopped, it is ended by the
// group's SIGKILL with ctrld's leftovers.
func watcherMain(args []string) int {
	if len(args) != 1 {
		return 2
	}
	parent, err := strconv.Atoi(args[0])
	if err != nil || parent < 1 {
		return 2
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
	nameWatcher()

	type verdict struct {
		stand bool          // told to stand down
		grace time.Duration // armed with this grace; 0 when never armed
	}
	var mu sync.Mutex
	var grace time.Duration
	piped := make(chan verdict, 1)
	go func() {
		// The pipe ends with EOF once every copy of the write end is
		// closed, and ctrld-install held the only one.
		r := bufio.NewReader(os.Stdin)
		for {
			b, err := r.ReadByte()
			if err != nil {
				mu.Lock()
				g := grace
				mu.Unlock()
				piped <- verdict{grace: g}
				return
			}
			switch b {
			case msgStand:
				piped <- verdict{stand: true}
				return
			case msgArm:
				line, err := r.ReadString('\n')
				d, perr := time.ParseDuration(strings.TrimSuffix(line, "\n"))
				if perr != nil || d <= 0 {
					d = DefaultGrace
				}
				mu.Lock()
				grace = d
				mu.Unlock()
				if err != nil {
					piped <- verdict{grace: d}
					return
				}
			}
		}
	}()
	// A second, per-system notice of the parent's death, in case the pipe
	// is held open some way this code did not foresee.
	gone := make(chan struct{})
	var once sync.Once
	parentGone := func() { once.Do(func() { close(gone) }) }
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

	var v verdict
	select {
	case v = <-piped:
	case <-gone:
		// What the parent wrote before it died is still in the pipe.
		t := time.NewTimer(standDownWait)
		select {
		case v = <-piped:
		case <-t.C:
			mu.Lock()
			v = verdict{grace: grace}
			mu.Unlock()
		}
	}
	if v.stand || v.grace == 0 {
		return 0
	}
	_ = syscall.Kill(0, syscall.SIGTERM)
	time.Sleep(v.grace)
	_ = syscall.Kill(0, syscall.SIGKILL) // the watcher too
	return 0
}
