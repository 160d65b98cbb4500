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

	"github.com/Control-D-Inc/ctrld-install/internal/cli"
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
	// SIGHUP: a manual run over ssh gets it when the connection drops.
	// SIGQUIT and SIGABRT would otherwise end Go with a stack dump and
	// leave ctrld running with the token on its argv.
	ctx, stop := signal.NotifyContext(context.Background(),
		os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGABRT)
	// A consumer that closed stdout (| head) must not kill the run: with a
	// handler installed, writes fail with EPIPE instead, and unlike an
	// ignored signal the handler is not inherited by ctrld.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	code := cli.Run(ctx, os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, cli.Build{Version: version, Commit: commitStamp})
	stop()
	os.Exit(code)
}
