// Package testflags holds what the test binaries of packages whose tests
// wait on child processes share.
package testflags

import (
	"flag"
	"runtime"
	"strconv"
)

// MoreParallel lets perCPU tests run at once for each CPU, unless
// -test.parallel was given: tests that spend their time waiting for child
// processes, daemons and time limits, not computing, would otherwise run
// two at a time on a 2-core machine and take the sum of their waits.
// Called from TestMain before m.Run.
func MoreParallel(perCPU int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(perCPU*runtime.GOMAXPROCS(0)))
	}
}
