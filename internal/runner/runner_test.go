//go:build unix

package runner

import (
	"context"
	"encoding/json"
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

func TestMain(m *testing.M) {
	if standin.IsFake() {
		os.Exit(standin.Main())
	}
	os.Exit(m.Run())
}

func install(t *testing.T, start standin.Action) string {
	t.Helper()
	p, err := standin.Install(t.TempDir(), standin.Script{Version: "v1.5.0", Start: start})
	require.NoError(t, err)
	return p
}

func collect(lines *[]string) func([]byte) {
	return func(b []byte) { *lines = append(*lines, string(b)) }
}

func TestRunCapturesLinesInOrderAcrossStreams(t *testing.T) {
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
	assert.Equal(t, r.Pid, r.Pgid, "the child must lead its own process group")
	assert.NotEqual(t, syscall.Getpgrp(), r.Pgid)
}

func TestRunFinalLineWithoutNewline(t *testing.T) {
	fake := install(t, standin.Action{RawStdout: []byte("a\nb\x00c\xff")})
	var lines []string
	_, err := Run(context.Background(), Command{Path: fake, Args: []string{"start"}, Dir: t.TempDir(), Line: collect(&lines)})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b\x00c\xff"}, lines)
}

func TestRunTruncatesLongLines(t *testing.T) {
	fake := install(t, standin.Action{LongLine: 10 << 20, Stdout: []string{"after"}})
	var lines []string
	_, err := Run(context.Background(), Command{Path: fake, Args: []string{"start"}, Dir: t.TempDir(), Line: collect(&lines)})
	require.NoError(t, err)
	// Stdout lines are printed before the long line.
	require.Len(t, lines, 2)
	assert.Equal(t, "after", lines[0])
	assert.Len(t, lines[1], MaxLine)
}

func TestRunTimeoutStopsTheGroup(t *testing.T) {
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
	dir := t.TempDir()
	rec := filepath.Join(dir, "rec")
	fake := install(t, standin.Action{Record: rec, Grandchild: true, Stdout: []string{"bye"}, Exit: 0})
	t0 := time.Now()
	var lines []string
	res, err := Run(context.Background(), Command{Path: fake, Args: []string{"start"}, Dir: dir, Grace: 700 * time.Millisecond, Line: collect(&lines)})
	require.NoError(t, err)
	assert.Less(t, time.Since(t0), 5*time.Second)
	assert.Equal(t, 0, res.ExitCode)
	assert.True(t, res.PipesHeld)
	assert.False(t, res.TimedOut)
	assert.Equal(t, []string{"bye"}, lines)

	b, err := os.ReadFile(rec)
	require.NoError(t, err)
	var r standin.Record
	require.NoError(t, json.Unmarshal(b, &r))
	assert.Eventually(t, func() bool { return !groupAlive(r.Pgid) }, 3*time.Second, 50*time.Millisecond, "leftover group members must be killed")
}

func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil
}

func TestRunStartFailure(t *testing.T) {
	_, err := Run(context.Background(), Command{Path: filepath.Join(t.TempDir(), "missing"), Dir: t.TempDir()})
	assert.ErrorIs(t, err, ErrStart)
}

// Memory must not grow with what ctrld prints. The bound is loose because
// the measurement includes the test binary's own heap.
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
	var lines []string
	w := &lineWriter{fn: collect(&lines)}
	for _, p := range []string{"ab", "c\nd", "e\n\nf"} {
		_, _ = w.Write([]byte(p))
	}
	w.close()
	_, _ = w.Write([]byte("late\n"))
	assert.Equal(t, []string{"abc", "de", "", "f"}, lines)
}

func TestLineWriterTruncationResumesAtNewline(t *testing.T) {
	var lines []string
	w := &lineWriter{fn: collect(&lines)}
	big := strings.Repeat("x", MaxLine+10)
	_, _ = w.Write([]byte(big[:100]))
	_, _ = w.Write([]byte(big[100:] + "\nnext\n"))
	w.close()
	require.Len(t, lines, 2)
	assert.Len(t, lines[0], MaxLine)
	assert.Equal(t, "next", lines[1])
}

func TestRunWithASpentBudget(t *testing.T) {
	fake := install(t, standin.Action{Exit: 0})
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	res, err := Run(ctx, Command{Path: fake, Args: []string{"start"}, Dir: t.TempDir()})
	require.NoError(t, err)
	assert.True(t, res.TimedOut)
	assert.Equal(t, -1, res.ExitCode)
}
