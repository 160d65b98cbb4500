package cli

import (
	"context"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/decide"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/profile"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/support"
)

// runCodes prints the whole code registry.
func runCodes(args []string, io stdio) int {
	fs := newFlagSet("ctrld-install codes")
	format := fs.String("format", "text", "")
	p := report.New(io.Out, io.Err, nil, false)
	if code, done := parseFlags(fs, args, p, io, "codes"); done {
		return code
	}
	if !slices.Contains(support.CodesFormats, *format) {
		return failUsage(p, nil, usagef("--format must be text, json or markdown"))
	}
	if err := support.WriteCodes(io.Out, *format); err != nil {
		return failWrite(p)
	}
	return 0
}

// failWrite ends a command whose output could not be written. Its failure
// line goes to the same broken stdout, so the sentence on stderr is what
// is seen.
func failWrite(p *report.Printer) int {
	p.Errorf("the output cannot be written")
	return report.Emit(p, nil, decide.Installer(outcome.Install, codes.InstallerFailed), profile.Default, version)
}

// interruptGrace bounds how long an interrupted command waits for its
// output to be taken: a stdout nobody reads must not keep it alive.
const interruptGrace = time.Second

// interruptible runs a command that does not run ctrld (status, codes,
// explain, summarize) so that SIGINT, SIGTERM or SIGHUP, which end ctx,
// end it at once with the usual error path: the sentence on stderr and
// the INSTALLER_INTERRUPTED lines, exit 68. main keeps those signals from
// killing the process, so without this a summary of a stream that never
// ends, or a write to a stdout nobody reads, would ignore them.
//
// The command writes through a gate that closes when the signal comes:
// whatever it was doing, it prints nothing after the interruption's lines.
func interruptible(ctx context.Context, io stdio, run func(stdio) int) int {
	g := &gate{}
	done := make(chan int, 1)
	go func() {
		done <- run(stdio{In: io.In, Out: gatedWriter{g, io.Out}, Err: gatedWriter{g, io.Err}})
	}()
	select {
	case code := <-done:
		if code != interruptedStatus {
			return code
		}
	case <-ctx.Done():
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
	ended := make(chan int, 1)
	go func() {
		p := report.New(io.Out, io.Err, nil, false)
		p.Errorf("the command was interrupted by a signal")
		ended <- report.Emit(p, nil, decide.Installer(outcome.Install, codes.InstallerInterrupted), profile.Default, version)
	}()
	select {
	case code := <-ended:
		return code
	case <-time.After(interruptGrace):
		return codes.Must(codes.InstallerInterrupted).Exit
	}
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
