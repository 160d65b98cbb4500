//go:build unix

package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// The test binary is also the watcher, the fake ctrld and, for the tests of
// ctrld-install's death, a stand-in ctrld-install. IsWatcher comes first,
// as in main, and lets Run use a watcher in every test.
func TestMain(m *testing.M) {
	if IsWatcher() {
		os.Exit(WatcherMain())
	}
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
	return m.Run()
}

// testScripts are executables that are no watcher.
var testScripts = map[string]string{
	"fails":  "#!/bin/sh\nexit 2\n",
	"silent": "#!/bin/sh\nexec sleep 60\n",
}

// parentEnv makes the test binary a stand-in ctrld-install that runs the
// fake ctrld named in it with testToken, and graceEnv sets its grace.
const (
	parentEnv = "RUNNER_TEST_PARENT_FAKE"
	graceEnv  = "RUNNER_TEST_PARENT_GRACE"
)

const testToken = "T0KEN-never-on-the-watcher"

func parentMain(fake string) int {
	grace, _ := time.ParseDuration(os.Getenv(graceEnv))
	res, err := Run(context.Background(), Command{
		Path: fake, Args: []string{"start", "--cd-org", testToken}, Dir: os.TempDir(), Env: []string{"NO_COLOR=1"}, Grace: grace,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 99
	}
	return res.ExitCode
}

func install(t *testing.T, start standin.Action) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), standin.Name)
	require.NoError(t, os.Link(filepath.Join(bin, standin.Name), p))
	require.NoError(t, standin.SetScript(p, standin.Script{Version: "v1.5.0", Start: start}))
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
	require.NoError(t, err)
	assert.Equal(t, 7, res.ExitCode)
	assert.False(t, res.TimedOut)
	assert.Equal(t, []string{"one", "two\r", "Error: three"}, lines)

	var r standin.Record
	b, err := os.ReadFile(rec)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &r))
	assert.Equal(t, []string{fake, "start", "--cd-org", "T"}, r.Argv, "start must be argv[1]")
	assert.Equal(t, dir, r.Dir)
	assert.Equal(t, "1", r.NoColor)
	assert.NotEqual(t, r.Pid, r.Pgid, "the watcher leads ctrld's group")
	assert.NotEqual(t, syscall.Getpgrp(), r.Pgid)
}

func TestRunFinalLineWithoutNewline(t *testing.T) {
	t.Parallel()
	fake := install(t, standin.Action{RawStdout: []byte("a\nb\x00c\xff")})
	var lines []string
	_, err := Run(context.Background(), Command{Path: fake, Args: []string{"start"}, Dir: t.TempDir(), Line: collect(&lines)})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b\x00c\xff"}, lines)
}

func TestRunCutsLongLines(t *testing.T) {
	t.Parallel()
	fake := install(t, standin.Action{LongLine: 10 << 20, Stdout: []string{"after"}})
	var lines, cut []string
	_, err := Run(context.Background(), Command{Path: fake, Args: []string{"start"}, Dir: t.TempDir(),
		Line: collect(&lines), LongLine: collect(&cut)})
	require.NoError(t, err)
	// Stdout lines are printed before the long line.
	assert.Equal(t, []string{"after"}, lines)
	require.Len(t, cut, 1)
	assert.Len(t, cut[0], MaxLine)
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
		require.NoError(t, err)
		require.Len(t, lines, 2, "the cut line is not among the complete ones")
		assert.Equal(t, "next", lines[0])
		assert.Len(t, lines[1], MaxLine, "exactly MaxLine bytes is still a complete line")
		if withLong {
			require.Len(t, cut, 1)
			assert.Len(t, cut[0], MaxLine)
			assert.True(t, strings.HasPrefix(cut[0], ident))
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
	require.NoError(t, err)
	assert.True(t, res.TimedOut)
	assert.False(t, res.Canceled)
	assert.Equal(t, -1, res.ExitCode, "killed by SIGTERM")
	assert.Less(t, time.Since(t0), 5*time.Second)
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
	require.NoError(t, err)
	assert.True(t, res.Canceled)
	assert.Equal(t, -1, res.ExitCode)
	el := time.Since(t0)
	assert.GreaterOrEqual(t, el, 500*time.Millisecond, "SIGTERM was ignored, so only SIGKILL after the grace ends it")
	assert.Less(t, el, 5*time.Second)
}

// A ctrld that exits but leaves a process holding stdout and stderr must not
// keep the run waiting longer than the grace period, and the leftover is
// killed with ctrld's group.
func TestRunGrandchildHoldingPipes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec")
	fake := install(t, standin.Action{Record: rec, Grandchild: true, Stdout: []string{"bye"}, Exit: 0})
	t0 := time.Now()
	var lines []string
	res, err := Run(context.Background(), Command{Path: fake, Args: []string{"start"}, Dir: dir, Grace: 700 * time.Millisecond, Line: collect(&lines)})
	require.NoError(t, err)
	assert.Less(t, time.Since(t0), 5*time.Second)
	assert.GreaterOrEqual(t, time.Since(t0), 700*time.Millisecond, "WaitDelay waited for the pipe")
	assert.Equal(t, 0, res.ExitCode)
	assert.False(t, res.TimedOut)
	assert.Equal(t, []string{"bye"}, lines)

	b, err := os.ReadFile(rec)
	require.NoError(t, err)
	var r standin.Record
	require.NoError(t, json.Unmarshal(b, &r))
	assert.Eventually(t, func() bool { return groupGone(t, r.Pgid) }, 2*time.Second, 20*time.Millisecond,
		"leftover group members must be killed")
}

func TestRunStartFailure(t *testing.T) {
	t.Parallel()
	_, err := Run(context.Background(), Command{Path: filepath.Join(t.TempDir(), "missing"), Dir: t.TempDir()})
	assert.ErrorIs(t, err, ErrStart)
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
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	assert.Equal(t, 0, res.ExitCode)
	assert.InDelta(t, int64(200<<20), n, 1, "every byte reaches the scanner once")
	assert.Less(t, after.HeapInuse, before.HeapInuse+8<<20)
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
	assert.Equal(t, []string{"abc", "de", "", "f"}, lines)
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
	assert.Equal(t, []string{"next"}, lines)
	require.Len(t, cut, 2)
	assert.Equal(t, big[:MaxLine], cut[0])
	assert.Equal(t, big[:MaxLine], cut[1])
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
				assert.Equal(t, []string{strings.Repeat("y", n)}, lines, "n=%d chunk=%d", n, chunk)
				assert.Empty(t, cut)
			} else {
				assert.Empty(t, lines, "n=%d chunk=%d", n, chunk)
				assert.Equal(t, []string{strings.Repeat("y", MaxLine)}, cut)
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
	require.NoError(t, err)
	assert.True(t, res.TimedOut)
	assert.Equal(t, -1, res.ExitCode)
}
