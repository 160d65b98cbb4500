// Command ctrld-install provisions Control D's DNS agent ctrld for MDM and
// RMM tools and reports one stable failure code on every surface: its exit
// status, its last lines on stdout, an optional log file, a durable outcome
// record and a JSON summary. Run `ctrld-install -h` for the flags.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/Control-D-Inc/ctrld-install/internal/runner"
	"github.com/Control-D-Inc/ctrld-install/internal/simulate"
)

func main() {
	// The runner starts this executable again to end ctrld if ctrld-install dies.
	if runner.IsWatcher() {
		os.Exit(runner.WatcherMain())
	}
	// --simulate starts this executable again as its stand-in for ctrld.
	if simulate.IsStandIn(os.Args[0], os.Getenv) {
		os.Exit(simulate.Main(os.Args[1:], os.Getenv, os.Stdout))
	}
	// SIGHUP too: a manual run over ssh gets it when the connection drops,
	// and ctrld must not be left running with the token on its argv.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	code := run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr})
	stop()
	os.Exit(code)
}
