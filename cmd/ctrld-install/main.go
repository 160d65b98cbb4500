// Command ctrld-install provisions Control D's DNS agent ctrld for MDM and
// RMM tools and reports one stable failure code on every surface: its exit
// status, its last lines on stdout, an optional log file, a durable outcome
// record and a JSON summary. Run `ctrld-install -h` for the flags.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/Control-D-Inc/ctrld-install/internal/cli"
	"github.com/Control-D-Inc/ctrld-install/internal/runner"
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// version is stamped at release time with -ldflags "-X main.version=...".
var version = "0.2.0-dev"

// commitStamp is stamped by scripts/release.sh (-X main.commitStamp=...):
// release builds leave the VCS settings out so that a build from a source
// export is byte-identical to one from a checkout.
var commitStamp string

func main() {
	// --simulate starts this executable again as its stand-in for ctrld.
	if standin.IsStandIn(os.Args[0], os.Getenv) {
		os.Exit(standin.Main())
	}
	ctx, armed := handleSignals()
	// ctrld start, restart and uninstall wait for the handlers; so does the
	// first write to stdout or stderr, which could meet a closed pipe.
	runner.HoldChangesUntil(armed)
	stdio := cli.Stdio{In: os.Stdin, Out: afterSignals{os.Stdout, armed}, Err: afterSignals{os.Stderr, armed}}
	code := cli.Run(ctx, os.Args[1:], stdio, cli.Build{Version: version, Commit: commitStamp})
	// The handlers are left in place: os.Exit ends the process, and taking
	// them down is another round trip to the runtime's signal thread.
	os.Exit(code)
}

// handleSignals returns a context done on the signals that stop a run, and
// a channel closed once they are handled. Registering each signal is a
// round trip to a thread the runtime starts for it, about a tenth of a
// process start, so it is done while the run begins instead of before.
//
// SIGHUP: a manual run over ssh gets it when the connection drops. SIGQUIT
// and SIGABRT would otherwise end Go with a stack dump and leave ctrld
// running with the token on its argv. SIGPIPE: a consumer that closed
// stdout (| head) must not kill the run; with a handler installed, writes
// fail with EPIPE instead, and unlike an ignored signal the handler is not
// inherited by ctrld.
func handleSignals() (context.Context, <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	armed := make(chan struct{})
	go func() {
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGABRT)
		signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
		close(armed)
		<-stop
		cancel()
	}()
	return ctx, armed
}

// afterSignals holds writes until the signal handlers are in place: until
// then a write to a closed pipe ends the process with SIGPIPE.
type afterSignals struct {
	w     io.Writer
	armed <-chan struct{}
}

func (a afterSignals) Write(p []byte) (int, error) {
	<-a.armed
	return a.w.Write(p)
}
