//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// fullEnv asks for the test that builds ctrld-install three times and runs
// it about forty times: too slow for every go test ./..., so CI runs it on
// its own:
//
//	CTRLD_INSTALL_BENCH_FULL=1 go test -count=1 -run '^TestEveryFigureIsTaken$' ./bench/cmd/ctrld-bench/
const fullEnv = "CTRLD_INSTALL_BENCH_FULL"

// Every figure can be taken and lands in the table. The sizes are too small
// to measure anything, and this machine may be busy: budgets are not
// checked here.
func TestEveryFigureIsTaken(t *testing.T) {
	if testing.Short() || os.Getenv(fullEnv) != "1" {
		t.Skipf("builds ctrld-install three times and runs it about forty times; %s=1 runs it", fullEnv)
	}
	var out bytes.Buffer
	err := run(config{runs: 2, scanRuns: 1, logBytes: 2e6, floodBytes: 8 << 20, memRuns: 1,
		timeout: time.Second, timeoutRuns: 1, fleetDevices: 500, fleetRuns: 1}, &out) // the shortest --timeout
	if err != nil && !errors.Is(err, errOverBudget) {
		t.Fatalf("run: %v, want nil or %v", err, errOverBudget)
	}
	table := out.String()
	t.Log("\n" + table)
	figures := []string{"wrapper overhead", "classifier throughput: runner + classifier", "classifier throughput: whole ctrld-install",
		"memory while ctrld prints 8 MiB", "time to verdict", "timeout precision", "size, darwin/arm64",
		"summarize --latest --format html, 500 devices: time", "summarize --latest --format html, 500 devices: memory",
		"fleet report page, 500 devices: render"}
	for _, f := range figures {
		if !strings.Contains(table, "| "+f+" |") {
			t.Errorf("table has no row %q", "| "+f+" |")
		}
	}
	if os.Geteuid() == 0 && !strings.Contains(table, "through internal/runner") {
		t.Errorf("the wrapper overhead row does not give the floor")
	}
	if os.Geteuid() == 0 && strings.Contains(table, "skipped") {
		t.Errorf("table run as root contains %q", "skipped")
	}
	if got, want := strings.Count(table, "\n|"), len(figures)+2; got != want {
		t.Errorf("table has %d rows, want %d: one row per figure after the header", got, want)
	}
}
