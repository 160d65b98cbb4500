package testflags

import (
	"flag"
	"runtime"
	"strconv"
	"testing"
)

func TestMain(m *testing.M) {
	MoreParallel(3)
	m.Run()
}

func TestMoreParallel(t *testing.T) {
	want := strconv.Itoa(3 * runtime.GOMAXPROCS(0))
	if got := flag.Lookup("test.parallel").Value.String(); got != want && !explicit() {
		t.Errorf("test.parallel %s, want %s", got, want)
	}
}

// explicit says whether -test.parallel was given, which MoreParallel leaves.
func explicit() bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	return set
}
