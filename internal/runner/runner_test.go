//go:build unix

package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/standin"
	_ "github.com/Control-D-Inc/ctrld-install/internal/standin/extra" // the test-only behaviours
	"github.com/Control-D-Inc/ctrld-install/internal/testflags"
)

// The test binary is also the fake ctrld and, for the tests of
// ctrld-install's death, a stand-in ctrld-install.
func TestMain(m *testing.M) {
	if standin.IsFake() {
		os.Exit(standin.Main())
	}
	if fake := os.Getenv(parentEnv); fake != "" {
		os.Exit(parentMain(fake))
	}
	os.Exit(testMain(m))
}

// bin holds every executable the tests run, all written before the first
// test: a file open for writing while a parallel test forks is inherited by
// that child until it execs, and exec of the file then fails with ETXTBSY
// (golang/go#22315). Tests hard-link the fake from here.
var bin string

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "runner-test-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if _, err := standin.Install(dir, standin.Script{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for name, text := range testScripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	bin = dir
	// Most tests wait on children and their time limits.
	testflags.MoreParallel(4)
	return m.Run()
}

// testScripts are executables that are no watcher.
var testScripts = map[string]string{
	"fails":  "#!/bin/sh\nexit 2\n",
	"silent": "#!/bin/sh\nexec sleep 60\n",
}

// parentEnv makes the test binary a stand-in ctrld-install that runs the
// fake ctrld named in it with testToken, graceEnv sets its grace, and
// modeEnv what it does: "" runs ctrld start, "brief" ctrld status as a
// brief command.
const (
	parentEnv = "RUNNER_TEST_PARENT_FAKE"
	graceEnv  = "RUNNER_TEST_PARENT_GRACE"
	modeEnv   = "RUNNER_TEST_PARENT_MODE"
)

const testToken = "T0KEN-never-on-the-watcher"

func parentMain(fake string) int {
	grace, _ := time.ParseDuration(os.Getenv(graceEnv))
	c := Command{
		Path: fake, Args: []string{"start", "--cd-org", testToken}, Dir: os.TempDir(), Env: []string{"NO_COLOR=1"}, Grace: grace,
	}
	switch os.Getenv(modeEnv) {
	case "brief":
		c.Args, c.Brief = []string{"status"}, true
	}
	res, err := Run(context.Background(), c)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 99
	}
	return res.ExitCode
}

func install(t *testing.T, start standin.Action) string {
	t.Helper()
	return installScript(t, standin.Script{Start: start})
}

// installScript links a stand-in that follows s (version 1.5.0 unless s
// says otherwise).
func installScript(t *testing.T, s standin.Script) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), standin.Name)
	if err := os.Link(filepath.Join(bin, standin.Name), p); err != nil {
		t.Fatal(err)
	}
	if s.Version == "" {
		s.Version = "v1.5.0"
	}
	if err := standin.SetScript(p, s); err != nil {
		t.Fatalf("SetScript: %v", err)
	}
	return p
}

func collect(lines *[]string) func([]byte) {
	return func(b []byte) { *lines = append(*lines, string(b)) }
}

func TestRunCapturesLinesInOrderAcrossStreams(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec")
	fake := install(t, standin.Action{
		Record: rec,
		Stdout: []string{"one", "two\r"},
		Stderr: []string{"Error: three"},
		Exit:   7,
	})
	var lines []string
	res, err := Run(context.Background(), Command{
		Path: fake, Args: []string{"start", "--cd-org", "T"}, Dir: dir,
		Env:  []string{"NO_COLOR=1"},
		Line: collect(&lines),
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got, want := res.ExitCode, 7; got != want {
		t.Errorf("Run: ExitCode = %d, want %d", got, want)
	}
	if res.TimedOut {
		t.Errorf("Run: TimedOut = true, want false")
	}
	if want := []string{"one", "two\r", "Error: three"}; !slices.Equal(lines, want) {
		t.Errorf("Run delivered lines %q, want %q", lines, want)
	}

	var r standin.Record
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("decoding the fake's record: %v", err)
	}
	if want := []string{fake, "start", "--cd-org", "T"}; !slices.Equal(r.Argv, want) {
		t.Errorf("ctrld's argv = %q, want %q: start must be argv[1]", r.Argv, want)
	}
	if got, want := r.Dir, dir; got != want {
		t.Errorf("ctrld's directory = %q, want %q", got, want)
	}
	if got, want := r.NoColor, "1"; got != want {
		t.Errorf("ctrld's NO_COLOR = %q, want %q", got, want)
	}
	if r.Pid == r.Pgid {
		t.Errorf("ctrld's pgid = its pid %d, want another: the watcher leads ctrld's group", r.Pid)
	}
	if pgrp := syscall.Getpgrp(); r.Pgid == pgrp {
		t.Errorf("ctrld's pgid = the test's process group %d, want another", pgrp)
	}
}

func TestRunFinalLineWithoutNewline(t *testing.T) {
	t.Parallel()
	fake := install(t, standin.Action{RawStdout: []byte("a\nb\x00c\xff")})
	var lines []string
	_, err := Run(context.Background(), Command{Path: fake, Args: []string{"start"}, Dir: t.TempDir(), Line: collect(&lines)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := []string{"a", "b\x00c\xff"}; !slices.Equal(lines, want) {
		t.Errorf("Run delivered lines %q, want %q", lines, want)
	}
}

func TestRunCutsLongLines(t *testing.T) {
	t.Parallel()
	fake := install(t, standin.Action{LongLine: 10 << 20, Stdout: []string{"after"}})
	var lines, cut []string
	_, err := Run(context.Background(), Command{Path: fake, Args: []string{"start"}, Dir: t.TempDir(),
		Line: collect(&lines), LongLine: collect(&cut)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	// Stdout lines are printed before the long line.
	if want := []string{"after"}; !slices.Equal(lines, want) {
		t.Errorf("Run delivered lines %q, want %q", lines, want)
	}
	if len(cut) != 1 {
		t.Fatalf("Run delivered %d cut lines, want 1", len(cut))
	}
	if got, want := len(cut[0]), MaxLine; got != want {
		t.Errorf("len(cut line) = %d, want %d", got, want)
	}
}

// A line that looks whole once trailing spaces are trimmed, but was cut,
// must reach only LongLine: the bytes after the cut could have made it
// anything.
func TestRunNeverDeliversACutLineAsComplete(t *testing.T) {
	t.Parallel()
	ident := "provisioning failed: stage=api code=API_DEVICE_INVALID (exit 20)"
	raw := ident + strings.Repeat(" ", 70000) + " and the rest of a log line\nnext\n" + ident + strings.Repeat(" ", MaxLine-len(ident)) + "\n"
	fake := install(t, standin.Action{RawStdout: []byte(raw)})
	for _, withLong := range []bool{true, false} {
		var lines, cut []string
		c := Command{Path: fake, Args: []string{"start"}, Dir: t.TempDir(), Line: collect(&lines)}
		if withLong {
			c.LongLine = collect(&cut)
		}
		_, err := Run(context.Background(), c)
		if err != nil {
			t.Fatalf("Run (LongLine set: %v): %v", withLong, err)
		}
		if len(lines) != 2 {
			t.Fatalf("Run (LongLine set: %v) delivered %d complete lines, want 2: the cut line is not among the complete ones", withLong, len(lines))
		}
		if got, want := lines[0], "next"; got != want {
			t.Errorf("Run (LongLine set: %v): first line = %q, want %q", withLong, got, want)
		}
		if got, want := len(lines[1]), MaxLine; got != want {
			t.Errorf("Run (LongLine set: %v): len(second line) = %d, want %d: exactly MaxLine bytes is still a complete line", withLong, got, want)
		}
		if withLong {
			if len(cut) != 1 {
				t.Fatalf("Run delivered %d cut lines, want 1", len(cut))
			}
			if got, want := len(cut[0]), MaxLine; got != want {
				t.Errorf("len(cut line) = %d, want %d", got, want)
			}
			if !strings.HasPrefix(cut[0], ident) {
				t.Errorf("cut line starts %q, want prefix %q", cut[0][:min(len(cut[0]), len(ident))], ident)
			}
		}
	}
}

func TestRunTimeoutStopsTheGroup(t *testing.T) {
	t.Parallel()
	fake := install(t, standin.Action{Hang: true})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	res, err := Run(ctx, Command{Path: fake, Args: []string{"start"}, Dir: t.TempDir(), Grace: time.Second})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !res.TimedOut {
		t.Errorf("Run: TimedOut = false, want true")
	}
	if res.Canceled {
		t.Errorf("Run: Canceled = true, want false")
	}
	if got, want := res.ExitCode, -1; got != want {
		t.Errorf("Run: ExitCode = %d, want %d: killed by SIGTERM", got, want)
	}
	if el, bound := time.Since(t0), 5*time.Second; el >= bound {
		t.Errorf("Run took %v, want less than %v", el, bound)
	}
}

func TestRunTimeoutKillsAChildThatIgnoresTerm(t *testing.T) {
	t.Parallel()
	fake := install(t, standin.Action{Hang: true, IgnoreTerm: true, Stdout: []string{"ready"}})
	ready := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-ready
		time.Sleep(100 * time.Millisecond) // let the fake install its handler... it did before printing
		cancel()
	}()
	t0 := time.Now()
	res, err := Run(ctx, Command{Path: fake, Args: []string{"start"}, Dir: t.TempDir(), Grace: 500 * time.Millisecond,
		Line: func([]byte) {
			select {
			case ready <- struct{}{}:
			default:
			}
		}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !res.Canceled {
		t.Errorf("Run: Canceled = false, want true")
	}
	if got, want := res.ExitCode, -1; got != want {
		t.Errorf("Run: ExitCode = %d, want %d", got, want)
	}
	el := time.Since(t0)
	if grace := 500 * time.Millisecond; el < grace {
		t.Errorf("Run took %v, want at least %v: SIGTERM was ignored, so only SIGKILL after the grace ends it", el, grace)
	}
	if bound := 5 * time.Second; el >= bound {
		t.Errorf("Run took %v, want less than %v", el, bound)
	}
}

func TestRunStartFailure(t *testing.T) {
	t.Parallel()
	_, err := Run(context.Background(), Command{Path: filepath.Join(t.TempDir(), "missing"), Dir: t.TempDir()})
	if !errors.Is(err, ErrStart) {
		t.Errorf("Run(missing executable): %v, want %v", err, ErrStart)
	}
}

// Memory must not grow with what ctrld prints. The bound is loose because
// the measurement includes the test binary's own heap. Not parallel: other
// tests' heaps would count.
func TestRunFloodKeepsMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 200 MB")
	}
	fake := install(t, standin.Action{FloodBytes: 200 << 20})
	var n int64
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := Run(context.Background(), Command{Path: fake, Args: []string{"start"}, Dir: t.TempDir(), Line: func(b []byte) { n += int64(len(b)) + 1 }})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	runtime.ReadMemStats(&after)
	if got, want := res.ExitCode, 0; got != want {
		t.Errorf("Run: ExitCode = %d, want %d", got, want)
	}
	if want := int64(200 << 20); n < want-1 || n > want+1 {
		t.Errorf("Run delivered %d bytes, want %d (±1): every byte reaches the scanner once", n, want)
	}
	if limit := before.HeapInuse + 8<<20; after.HeapInuse >= limit {
		t.Errorf("HeapInuse after Run = %d, want less than %d (before + 8 MiB)", after.HeapInuse, limit)
	}
}

func TestLineWriterSplitsAcrossWrites(t *testing.T) {
	t.Parallel()
	var lines []string
	w := &lineWriter{fn: collect(&lines)}
	for _, p := range []string{"ab", "c\nd", "e\n\nf"} {
		_, _ = w.Write([]byte(p))
	}
	w.close()
	_, _ = w.Write([]byte("late\n"))
	if want := []string{"abc", "de", "", "f"}; !slices.Equal(lines, want) {
		t.Errorf("lineWriter delivered %q, want %q", lines, want)
	}
}

func TestLineWriterCutResumesAtNewline(t *testing.T) {
	t.Parallel()
	var lines, cut []string
	w := &lineWriter{fn: collect(&lines), cut: collect(&cut)}
	big := strings.Repeat("x", MaxLine+10)
	_, _ = w.Write([]byte(big[:100]))
	_, _ = w.Write([]byte(big[100:] + "\nnext\n"))
	_, _ = w.Write([]byte(big[:MaxLine+1])) // cut, and never ended
	w.close()
	if want := []string{"next"}; !slices.Equal(lines, want) {
		t.Errorf("lineWriter delivered %q, want %q", lines, want)
	}
	if len(cut) != 2 {
		t.Fatalf("lineWriter delivered %d cut lines, want 2", len(cut))
	}
	for i, c := range cut {
		if c != big[:MaxLine] {
			t.Errorf("cut line %d: %d bytes, want the first %d bytes of the long line", i, len(c), MaxLine)
		}
	}
}

func TestLineWriterBoundary(t *testing.T) {
	t.Parallel()
	for _, n := range []int{MaxLine - 1, MaxLine, MaxLine + 1} {
		for _, chunk := range []int{1 << 10, MaxLine, MaxLine + 2} {
			var lines, cut []string
			w := &lineWriter{fn: collect(&lines), cut: collect(&cut)}
			p := []byte(strings.Repeat("y", n) + "\n")
			for len(p) > 0 {
				k := min(chunk, len(p))
				_, _ = w.Write(p[:k])
				p = p[k:]
			}
			w.close()
			if n <= MaxLine {
				if want := []string{strings.Repeat("y", n)}; !slices.Equal(lines, want) {
					t.Errorf("n=%d chunk=%d: lineWriter delivered %d lines, want one line of %d bytes", n, chunk, len(lines), n)
				}
				if len(cut) != 0 {
					t.Errorf("n=%d chunk=%d: lineWriter delivered %d cut lines, want none", n, chunk, len(cut))
				}
			} else {
				if len(lines) != 0 {
					t.Errorf("n=%d chunk=%d: lineWriter delivered %d lines, want none", n, chunk, len(lines))
				}
				if want := []string{strings.Repeat("y", MaxLine)}; !slices.Equal(cut, want) {
					t.Errorf("n=%d chunk=%d: lineWriter delivered %d cut lines, want one of %d bytes", n, chunk, len(cut), MaxLine)
				}
			}
		}
	}
}

func TestRunWithASpentBudget(t *testing.T) {
	t.Parallel()
	fake := install(t, standin.Action{Exit: 0})
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	res, err := Run(ctx, Command{Path: fake, Args: []string{"start"}, Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !res.TimedOut {
		t.Errorf("Run with a spent budget: TimedOut = false, want true")
	}
	if got, want := res.ExitCode, -1; got != want {
		t.Errorf("Run with a spent budget: ExitCode = %d, want %d", got, want)
	}
}

// A callback that panics on os/exec's goroutine, where nothing could
// recover it, panics again on Run's caller once ctrld has ended, so that
// the caller's recover can end the run with its record and final line.
func TestCallbackPanicReachesTheCaller(t *testing.T) {
	t.Parallel()
	fake := install(t, standin.Action{Stdout: []string{"one", "two"}, SleepMS: 200})
	for _, tc := range []struct {
		name string
		c    Command
	}{
		{"line", Command{Line: func([]byte) { panic("from a line") }}},
		{"progress", Command{Progress: func(time.Duration) { panic("from progress") }, ProgressEvery: 20 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := tc.c
			c.Path, c.Args, c.Dir = fake, []string{"start"}, t.TempDir()
			var got any
			func() {
				defer func() { got = recover() }()
				_, _ = Run(context.Background(), c)
			}()
			if got == nil {
				t.Fatal("Run returned without raising the callback's panic")
			}
		})
	}
}
