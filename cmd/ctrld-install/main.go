// Command ctrld-install provisions Control D's DNS agent ctrld for MDM and
// RMM tools and reports one stable failure code on every surface: its exit
// status, its last lines on stdout, an optional log file, a durable outcome
// record and a JSON summary. Run `ctrld-install -h` for the flags.
package main

import (
	"os"

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
	os.Exit(cli.Main(os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, cli.Build{Version: version, Commit: commitStamp}))
}
