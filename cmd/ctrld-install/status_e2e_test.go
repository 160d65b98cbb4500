//go:build unix

package main

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// status polled while runs follow each other in one home never reports a
// run that succeeded as killed: a run writes its outcome and then releases
// the lock, and a status that read the record just before and probed the
// lock just after reads the record again. Each answer is the outcome of a
// run (OK) or a run in progress.
func TestStatusPolledAgainstBackToBackRuns(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	w := newWorld(t)
	w.script(standinSuccess(w))
	// Twelve runs: the old order of reading and probing read a finished run
	// as killed a few times in every sixteen.
	const runs = 12
	first := w.run("--token", canaryToken, "--force")
	require.Equal(t, 0, first.exit, first.stdout+first.stderr)

	done := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	answers := map[string]int{}
	polls := 0
	for range 2 {
		wg.Add(1)
		// Each poller ends when the runs do.
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				cmd := exec.Command(installerBin, "status", "--home", w.home, "--format", "jamf-ea")
				cmd.Env = cleanEnv()
				out, err := cmd.Output()
				mu.Lock()
				polls++
				if err != nil {
					answers["error: "+err.Error()]++
				} else {
					answers[strings.TrimSpace(string(out))]++
				}
				mu.Unlock()
			}
		}()
	}
	for i := range runs {
		r := w.run("--token", canaryToken, "--force")
		if r.exit != 0 {
			close(done)
			wg.Wait()
			require.Equal(t, 0, r.exit, "run %d: %s", i, r.stdout+r.stderr)
		}
	}
	close(done)
	wg.Wait()
	t.Logf("%d polls over %d runs: %v", polls, runs, answers)
	for answer, n := range answers {
		switch answer {
		case "<result>OK</result>", "<result>RUNNING</result>":
		default:
			t.Errorf("status answered %q %d times of %d; want only OK or RUNNING", answer, n, polls)
		}
	}
}

// standinSuccess is the stand-in of a ctrld whose start succeeds.
func standinSuccess(w *world) standin.Script {
	return standin.Script{Start: w.success()}
}

// status whose standard output cannot be written (a closed pipe) ends as
// every other report command does: the error line on stderr and
// INSTALLER_FAILED's exit status, in every format and every state, never a
// silent 0 and never SIGPIPE.
func TestStatusClosedStdout(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	never := t.TempDir()
	w := newWorld(t)
	w.script(standinSuccess(w))
	r := w.run("--token", canaryToken)
	require.Equal(t, 0, r.exit, r.stdout+r.stderr)
	failed := codes.Must(codes.InstallerFailed)
	for _, home := range []string{never, w.home} {
		for _, format := range []string{"text", "json", "jamf-ea"} {
			cmd := exec.Command(installerBin, "status", "--home", home, "--format", format)
			cmd.Env = cleanEnv()
			cmd.Stdout = closedStdout(t)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "status --format %s exited 0 with its output lost", format)
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Fatalf("status --format %s was killed by %v", format, ws.Signal())
			}
			assert.Equal(t, failed.Exit, ee.ExitCode(), "status --format %s: %s", format, stderr.String())
			assert.Equal(t, "ctrld-install: error: the output cannot be written\n", stderr.String(), "status --format %s", format)
		}
	}
}
