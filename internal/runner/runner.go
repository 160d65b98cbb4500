// Package runner runs one ctrld command as a child process under a time
// limit and hands its output to line callbacks without keeping it.
//
// The child gets a process group of its own so the time limit can stop ctrld
// and everything it started: SIGTERM to the group, a grace period, then
// SIGKILL. exec.Cmd.WaitDelay bounds how long a leftover process that holds
// the output pipe can keep the run waiting after ctrld exits or is stopped.
// A ctrld that exits by itself leaves its group alone (unless the command is
// [Command.Brief]): a service manager may have started the daemon in it.
//
// When ctrld-install dies without stopping ctrld itself (SIGKILL, say), ctrld
// dies with it: on Linux the kernel sends ctrld SIGKILL (PR_SET_PDEATHSIG);
// on Unix a watcher process (watcher.go) leads the group of every
// command that is not brief (every command, off Linux) and ends that group;
// on Windows a job object ends ctrld's whole tree.
package runner

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// MaxLine is the longest line handed to a callback. The rest of a longer
// line is dropped: no message ctrld-install recognises is that long, and it
// keeps memory bounded however ctrld misbehaves.
const MaxLine = 64 << 10

// DefaultGrace is the time between SIGTERM and SIGKILL.
const DefaultGrace = 3 * time.Second

// Command describes one run of ctrld.
type Command struct {
	Path  string        // absolute path of the binary; never looked up in PATH
	Argv0 string        // argv[0]; Path when empty
	Args  []string      // argv[1:]
	Dir   string        // working directory
	Env   []string      // the complete environment
	Grace time.Duration // SIGTERM to SIGKILL; DefaultGrace when zero

	// Line receives each complete line of the combined stdout and stderr,
	// in the order written, without the trailing newline. A final line
	// without a newline counts as complete. It must not retain the slice.
	// It may be nil.
	Line func(line []byte)

	// LongLine receives, in Line's place, the first MaxLine bytes of each
	// line longer than MaxLine. What a cut line would have said is unknown,
	// so it must never be taken as a whole message. It must not retain the
	// slice. When nil, cut lines are dropped.
	LongLine func(prefix []byte)

	// Brief marks a command that carries no secret, changes nothing and
	// starts nothing that must outlive it (ctrld --version, ctrld status).
	// What is left of its group when it exits is killed. On Linux it runs
	// without a watcher: the kernel's parent-death signal ends it with
	// ctrld-install, and a watcher would cost a process start for every
	// such call. A command that is not brief (start, restart, uninstall)
	// leaves its group alone when it exits by itself: the SysV init script
	// starts the daemon inside it.
	Brief bool

	// Progress, when set, is called every ProgressEvery while ctrld runs,
	// with the time since ctrld started (a multiple of ProgressEvery), from
	// another goroutine; never after Run returns.
	Progress func(elapsed time.Duration)
	// ProgressEvery is DefaultProgress when zero.
	ProgressEvery time.Duration
}

// DefaultProgress is how often Progress is called.
const DefaultProgress = 30 * time.Second

// Result is how a run ended.
type Result struct {
	ExitCode int  // the child's exit status; -1 when it was killed by a signal
	TimedOut bool // the context's deadline passed and the child was stopped
	Canceled bool // the context was cancelled (not by its deadline) and the child was stopped
}

// ErrStart wraps failures to start the child at all.
var ErrStart = errors.New("cannot start ctrld")

// Run starts the command and waits for it, stopping it when ctx is done.
// The returned error is non-nil only when the child could not be started.
func Run(ctx context.Context, c Command) (Result, error) {
	inherited.Do(closeInherited)
	return run(ctx, c, !c.Brief || !parentDeathKills)
}

// inherited: what the caller left open is made close-on-exec once, before
// the first child; nothing opened later is inherited anyway.
var inherited sync.Once

// run is Run with the choice of a watcher made by the caller, so tests can
// also run without one.
func run(ctx context.Context, c Command, watch bool) (Result, error) {
	grace := c.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	if err := ctx.Err(); err != nil {
		return spent(err), nil
	}
	lw := &lineWriter{fn: c.Line, cut: c.LongLine}
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	cmd.Args[0] = c.Path
	if c.Argv0 != "" {
		cmd.Args[0] = c.Argv0
	}
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	// One writer for both streams: exec then gives the child a single pipe,
	// which keeps stdout and stderr lines in the order ctrld wrote them.
	cmd.Stdout = lw
	cmd.Stderr = lw
	var stopped atomic.Bool
	// newGroup starts the watcher, when there is one, before ctrld: ctrld
	// then never runs unwatched.
	g := newGroup(ctx, cmd, grace, watch)
	killAfterExit(g, c.Brief)
	// finish kills what is left of ctrld's group, or leaves it to the daemon
	// ctrld started there, and reaps the watcher. Until then the group's ID
	// cannot name anyone else.
	defer g.finish(cmd)
	cmd.Cancel = func() error {
		stopped.Store(true)
		return g.terminate(cmd)
	}
	// The grace period after SIGTERM: then os/exec kills ctrld and closes
	// the pipes whoever holds them, and finish kills the rest of the group.
	// After a normal exit it bounds how long a leftover holding the pipe
	// keeps the run.
	cmd.WaitDelay = grace

	// Linux sends ctrld its parent-death signal when the thread that forked
	// it ends, not the process, and the Go runtime ends a thread whose
	// goroutine exits locked to it: the forking thread stays locked to this
	// goroutine, which outlives ctrld, so it ends only with the process.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		// Starting the watcher took time too; exec.Cmd refuses to start
		// once ctx is done.
		if ctx.Err() != nil {
			return spent(ctx.Err()), nil
		}
		return Result{ExitCode: -1}, errors.Join(ErrStart, err)
	}
	g.started(cmd)
	stopProgress := progress(c)
	// Where it can, the group is settled before ctrld is reaped: ctrld
	// unreaped keeps the group's ID from naming anyone else.
	awaitExit(g, cmd)
	_ = cmd.Wait() // the outcome is in ProcessState, ctx and stopped
	progressPanic := stopProgress()
	lw.close()
	// A callback that panicked ran on another goroutine, where nothing can
	// recover it; its panic is raised again here, on the caller's, once
	// ctrld has ended, with the group settled as the panic unwinds.
	if lw.panicked != nil {
		panic(lw.panicked)
	}
	if progressPanic != nil {
		panic(progressPanic)
	}
	res := Result{ExitCode: -1}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if stopped.Load() {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			res.TimedOut = true
		} else {
			res.Canceled = true
		}
	}
	return res, nil
}

// progress calls c.Progress every c.ProgressEvery until the returned
// function is called; that function returns once no call is running, with
// what a call panicked with, if one did (no call follows a panic).
func progress(c Command) (stop func() (panicked any)) {
	if c.Progress == nil {
		return func() any { return nil }
	}
	every := c.ProgressEvery
	if every <= 0 {
		every = DefaultProgress
	}
	t0 := time.Now()
	var (
		mu       sync.Mutex
		stopped  bool
		panicked any
		t        *time.Timer
	)
	mu.Lock()
	defer mu.Unlock()
	t = time.AfterFunc(every, func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		if panicked = recovered(func() { c.Progress(time.Since(t0).Truncate(every)) }); panicked != nil {
			stopped = true
			return
		}
		// The next call one interval after this one was due.
		next := every - time.Since(t0)%every
		t.Reset(next)
	})
	return func() any {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		t.Stop()
		return panicked
	}
}

// recovered runs f and returns what it panicked with, nil if it did not.
func recovered(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

// spent is the result of a run whose budget was spent before ctrld could
// start: the time limit, not a start failure.
func spent(err error) Result {
	return Result{ExitCode: -1, TimedOut: errors.Is(err, context.DeadlineExceeded), Canceled: errors.Is(err, context.Canceled)}
}

// lineWriter splits what the child writes into lines for the callbacks,
// holding at most MaxLine bytes.
type lineWriter struct {
	mu     sync.Mutex
	fn     func([]byte) // complete lines
	cut    func([]byte) // the prefix of lines longer than MaxLine
	buf    []byte
	long   bool // the current line passed MaxLine; drop until newline
	closed bool
	// panicked is what a callback panicked with; no callback is called
	// after one has.
	panicked any
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || (w.fn == nil && w.cut == nil) {
		return len(p), nil
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.appendPart(p)
			break
		}
		w.appendPart(p[:i])
		w.emit()
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineWriter) appendPart(p []byte) {
	if w.long {
		return
	}
	room := MaxLine - len(w.buf)
	if len(p) > room {
		p = p[:room]
		w.long = true
	}
	w.buf = append(w.buf, p...)
}

func (w *lineWriter) emit() {
	fn := w.fn
	if w.long {
		fn = w.cut
	}
	if fn != nil {
		if w.panicked = recovered(func() { fn(w.buf) }); w.panicked != nil {
			w.fn, w.cut = nil, nil
		}
	}
	w.buf = w.buf[:0]
	w.long = false
	if cap(w.buf) > 4<<10 {
		w.buf = nil // a long line once should not pin 64 KiB for the run
	}
}

// close flushes a final line that had no newline and drops later writes.
func (w *lineWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if len(w.buf) > 0 || w.long {
		w.emit()
	}
	w.closed = true
	w.buf = nil
}
