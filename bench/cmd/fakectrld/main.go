// Command fakectrld is the stand-in ctrld the benchmarks run, installed as
// `ctrld`: internal/standin, the same stand-in the tests and --simulate
// run, in a binary of its own, with the test-only behaviours of
// internal/standin/extra. A test binary carries its whole test
// package, and its start-up time would be part of every figure measured
// against it.
package main

import (
	"os"

	"github.com/Control-D-Inc/ctrld-install/internal/standin"
	// The behaviours only tests and the bench need; ctrld-install's
	// --simulate runs the core alone.
	_ "github.com/Control-D-Inc/ctrld-install/internal/standin/extra"
)

func main() { os.Exit(standin.Main()) }
