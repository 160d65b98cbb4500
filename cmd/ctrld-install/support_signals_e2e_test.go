//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
)

// fullPipe is a pipe whose buffer is full and which nobody reads: a
// process writing its stdout there blocks in the write.
func fullPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(); w.Close() })
	chunk := make([]byte, 4096)
	for {
		require.NoError(t, w.SetWriteDeadline(time.Now().Add(50*time.Millisecond)))
		if _, err := w.Write(chunk); err != nil {
			break
		}
	}
	require.NoError(t, w.SetWriteDeadline(time.Time{}))
	return r, w
}

// summarize, explain, status and codes keep Go's default signal
// behaviour: SIGINT, SIGTERM and SIGHUP end them at once, however they are
// stuck (reading a stream that never ends, writing to a stdout nobody
// reads), with no partial output. They hold no lock and change nothing.
func TestSupportCommandsEndOnSignals(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	home := t.TempDir()
	for _, tc := range []struct {
		name    string
		args    []string
		stuck   string
		blocked bool // stdout is a full pipe
	}{
		{"summarize", []string{"summarize", "--latest"}, "reading a standard input that never ends", false},
		{"summarize from -", []string{"summarize", "-"}, "reading a standard input that never ends", false},
		{"explain", []string{"explain", "LISTENER_BIND_FAILED"}, "writing to a full stdout", true},
		{"status", []string{"status", "--home", home}, "writing to a full stdout", true},
		{"codes", []string{"codes"}, "writing to a full stdout", true},
	} {
		for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
			if tc.name == "codes" && sig != syscall.SIGTERM || tc.name == "summarize from -" && sig != syscall.SIGHUP {
				continue
			}
			t.Run(tc.name+" "+sig.String(), func(t *testing.T) {
				t.Parallel()
				cmd := exec.Command(installerBin, tc.args...)
				cmd.Env = cleanEnv()
				stdinR, stdinW, err := os.Pipe()
				require.NoError(t, err)
				defer stdinW.Close()
				cmd.Stdin = stdinR
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				if tc.blocked {
					_, w := fullPipe(t)
					cmd.Stdout = w
				}
				require.NoError(t, cmd.Start())
				stdinR.Close()
				// The stream has started and will never end.
				fmt.Fprintln(stdinW, report.Prefix+codes.FailureLine(codes.VerbProvisioning, codes.Must(codes.ListenerBindFailed)))
				time.Sleep(100 * time.Millisecond) // let it get stuck
				require.NoError(t, cmd.Process.Signal(sig))
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				select {
				case err = <-done:
				case <-time.After(10 * time.Second):
					cmd.Process.Kill()
					<-done
					t.Fatalf("%s %s still ran 10s after %v", tc.name, tc.stuck, sig)
				}
				var ee *exec.ExitError
				require.ErrorAs(t, err, &ee, "stderr: %s", errb.String())
				ws, ok := ee.Sys().(syscall.WaitStatus)
				require.True(t, ok)
				assert.True(t, ws.Signaled() && ws.Signal() == sig, "%s ended with %v, want killed by %v; stderr: %s", tc.name, ws, sig, errb.String())
				if !tc.blocked {
					assert.Empty(t, out.String(), "a summary of a stream cut short")
				}
			})
		}
	}
}

// A FIFO, a device or a socket named on the command line is refused
// before anything is read: opening a FIFO nobody writes would block
// forever. Standard input is the way to pipe a stream in.
func TestSummarizeRefusesAFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for _, args := range [][]string{{"summarize", fifo}, {"summarize", dir, fifo}, {"summarize", "/dev/null"}} {
		done := make(chan result, 1)
		go func() { done <- runInstaller(t, nil, "", args...) }()
		select {
		case r := <-done:
			assertUsageFailure(t, r, fmt.Sprintf("input %d of %d is not a regular file or directory; pipe a stream to standard input with -", len(args)-1, len(args)-1))
		case <-time.After(10 * time.Second):
			t.Fatalf("summarize %v blocked", args[1:])
		}
	}
}
