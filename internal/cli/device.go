package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/Control-D-Inc/ctrld-install/internal/report"
)

// flushGrace is how long the final lines may still take to reach a
// consumer once the budget is spent or a signal ended the run: a consumer
// that reads nothing costs the run at most its budget and this.
const flushGrace = time.Second

// defaultBudget bounds the final flush of a command line whose budget is
// not known (an unknown command): install's default --timeout.
const defaultBudget = 5 * time.Minute

// device prepares a command that acts on the device (install, verify,
// uninstall, and an unknown command, which ends as install would) before it
// prints anything: the signals that end its run with a final line, and
// standard streams that never keep it waiting. The returned function waits
// for the streams within the budget and takes the handlers down.
func (a *app) device(fs *pflag.FlagSet) (*app, func()) {
	start := time.Now()
	d := *a
	stop := context.CancelFunc(func() {})
	if a.signals {
		// Registered here, before the first line and the first ctrld
		// command: from then on a signal stops ctrld and ends the run
		// with its record and final line. Nothing has changed before.
		d.ctx, stop = signal.NotifyContext(a.ctx, stopSignals...)
	}
	out, errw := report.Detach(a.io.Out, a.io.Err)
	d.io.Out, d.io.Err = out, errw
	return &d, func() {
		deadline := start.Add(budgetOf(fs))
		if d.ctx.Err() != nil || time.Now().After(deadline) {
			deadline = time.Now()
		}
		deadline = deadline.Add(flushGrace)
		out.Close(deadline)
		errw.Close(deadline)
		stop()
	}
}

// budgetOf is the command's --timeout, as parsed.
func budgetOf(fs *pflag.FlagSet) time.Duration {
	if fs != nil {
		if d, err := fs.GetDuration("timeout"); err == nil && d > 0 {
			return d
		}
	}
	return defaultBudget
}

// ignorePipeSignal makes a write to a closed stdout or stderr fail with
// EPIPE instead of ending the process: every command then ends through its
// own error path. A handler, unlike an ignored signal, is not inherited by
// ctrld.
func ignorePipeSignal() {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
}
