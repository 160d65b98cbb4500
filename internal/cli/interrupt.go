package cli

import (
	"io"
	"sync"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
)

// interruptedStatus is what a report command returns when its context
// ended; interruptible has already reported it.
const interruptedStatus = -1

// interruptGrace bounds how long an interrupted command waits for its
// output to be taken: a stdout nobody reads must not keep it alive.
const interruptGrace = time.Second

// interruptible runs a report command (status, codes, explain, summarize)
// so that SIGINT, SIGTERM or SIGHUP, which end the context, end it at once:
// the sentence on stderr and INSTALLER_INTERRUPTED's exit status, 68. main
// keeps those signals from killing the process, so without this a summary
// of a stream that never ends, or a write to a stdout nobody reads, would
// ignore them.
//
// The command writes through a gate that closes when the signal comes:
// whatever it was doing, it prints nothing after the interruption's line.
func (a *app) interruptible(c *call, act action) int {
	g := &gate{}
	gated := *a
	gated.io = Stdio{In: a.io.In, Out: gatedWriter{g, a.io.Out}, Err: gatedWriter{g, a.io.Err}}
	gc := *c
	gc.p = report.New(gated.io.Out, gated.io.Err, nil, false)
	done := make(chan int, 1)
	go func() { done <- act(&gated, &gc) }()
	select {
	case code := <-done:
		if code != interruptedStatus {
			return code
		}
	case <-a.ctx.Done():
	}
	// A command blocked in a write holds the gate; it is not waited for.
	closed := make(chan struct{})
	go func() {
		g.mu.Lock()
		g.closed = true
		g.mu.Unlock()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(interruptGrace / 4):
	}
	ended := make(chan struct{})
	go func() {
		c.p.Errorf("the command was interrupted by a signal")
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(interruptGrace):
	}
	return codes.Must(codes.InstallerInterrupted).Exit
}

type gate struct {
	mu     sync.Mutex
	closed bool
}

type gatedWriter struct {
	g *gate
	w io.Writer
}

// Write drops what comes after the gate closed, as if it had been written.
func (w gatedWriter) Write(p []byte) (int, error) {
	w.g.mu.Lock()
	defer w.g.mu.Unlock()
	if w.g.closed {
		return len(p), nil
	}
	return w.w.Write(p)
}
