// Command fakectrld is the stand-in ctrld the benchmarks run, installed as
// `ctrld`: internal/standin, the same stand-in the tests and --simulate
// run, in a binary of its own. A test binary carries its whole test
// package, and its start-up time would be part of every figure measured
// against it.
package main

import (
	"os"

	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

func main() { os.Exit(standin.Main()) }
