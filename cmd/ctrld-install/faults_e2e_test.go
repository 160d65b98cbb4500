//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/lock"
	"github.com/Control-D-Inc/ctrld-install/internal/platform"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/runner"
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// Faults at the level of processes: signals, kills, closed pipes, a secret
// that never arrives, homes and files someone else controls.

// worldArgs are the flags that point a run at the world.
func (w *world) worldArgs(args ...string) []string {
	return append([]string{"--ctrld", w.fake, "--home", w.home, "--service-file", w.serviceFile, "--log", w.logFile}, args...)
}

// emptyDir makes a private directory for TMPDIR.
func emptyDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "tmp")
	require.NoError(t, os.Mkdir(d, 0o700))
	return d
}

func assertEmptyDir(t *testing.T, dir, why string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Empty(t, names, why)
}

// A token file that is a FIFO nobody writes, or a standard input that
// never closes, cannot hold the run past its budget or a signal.
func TestSecretThatNeverArrives(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	for _, src := range []string{"FIFO token file", "stdin never closed"} {
		for _, end := range []string{"time limit", "SIGTERM"} {
			t.Run(src+", "+end, func(t *testing.T) {
				t.Parallel()
				w := newWorld(t)
				w.script(standin.Script{Start: w.success()})
				timeout := "2s"
				if end == "SIGTERM" {
					timeout = "1m"
				}
				args := w.worldArgs("--timeout", timeout)
				var stdinR *os.File
				if src == "FIFO token file" {
					fifo := filepath.Join(w.dir, "token.fifo")
					require.NoError(t, syscall.Mkfifo(fifo, 0o600))
					args = append(args, "--token-file", fifo)
				} else {
					r, wr, err := os.Pipe()
					require.NoError(t, err)
					t.Cleanup(func() { wr.Close() }) // the writer stays open for the whole run
					stdinR = r
					args = append(args, "--token-stdin")
				}
				p := newProc(nil, args...)
				if stdinR != nil {
					p.cmd.Stdin = stdinR
				}
				p.start(t)
				if stdinR != nil {
					stdinR.Close()
				}

				if end == "time limit" {
					r := p.wait(t, 2*time.Second+3*time.Second+10*time.Second)
					assertWithinBudget(t, r.elapsed, 2*time.Second)
					require.NotZero(t, r.exit, r.stdout+r.stderr)
					c, ok := codes.ByExit(r.exit)
					require.True(t, ok, "exit %d is no registered code", r.exit)
					m := failureLineRE.FindStringSubmatch(finalLine(r.stdout))
					require.NotNil(t, m, "the last line is an identifier line: %q", r.stdout)
					assert.Equal(t, c.Name, m[2])
					assert.Equal(t, c.Name, w.record().Code)
					w.assertNoCanary(r)
				} else {
					time.Sleep(500 * time.Millisecond)
					require.False(t, p.exited(), "the run ended before the signal: %s", p.res.stdout)
					require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
					// Interrupted, not the time limit: the signal ended it.
					r := p.wait(t, time.Minute+runner.DefaultGrace)
					w.assertFailure(r, codes.InstallerInterrupted, "installer")
				}
				assert.Empty(t, actions(t, w.argvFile), "ctrld start must not run without a token")
			})
		}
	}
}

// SIGQUIT and SIGABRT would end a Go program with a stack dump and leave
// ctrld running with the token on its argv; they stop the run like SIGTERM.
func TestQuitSignalsStopCtrldsGroup(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGQUIT, syscall.SIGABRT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.script(standin.Script{Start: standin.Action{Hang: true, IgnoreTerm: true, Stdout: leak}})
			p := startInstaller(t, nil, nil, w.worldArgs("--token", canaryToken, "--timeout", "1m")...)
			started := waitForStart(t, w.argvFile)
			killGroupLater(t, started.Pgid)
			t0 := time.Now()
			require.NoError(t, p.cmd.Process.Signal(sig))
			r := p.wait(t, 15*time.Second)
			w.assertFailure(r, codes.InstallerInterrupted, "installer")
			assert.NotContains(t, r.stderr, "goroutine ", "no stack dump")
			took := groupGoneWithin(t, started.Pgid, t0, 4*time.Second)
			t.Logf("ctrld's group gone %s after %s", took.Round(time.Millisecond), sig)
		})
	}
}

// ctrld-install killed outright cannot stop ctrld itself: its watcher, in
// ctrld's group and outside ctrld-install's, ends that group.
func TestKilledInstallerLeavesNoCtrld(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	for _, tc := range []struct {
		name   string
		setsid bool
	}{
		{"SIGKILL of ctrld-install", false},
		{"SIGKILL of its whole process group", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.script(standin.Script{Start: standin.Action{Hang: true, IgnoreTerm: true, Stdout: leak}})
			var attr *syscall.SysProcAttr
			if tc.setsid {
				attr = &syscall.SysProcAttr{Setsid: true}
			}
			p := startInstaller(t, attr, nil, w.worldArgs("--token", canaryToken, "--timeout", "1m")...)
			started := waitForStart(t, w.argvFile)
			killGroupLater(t, started.Pgid)
			require.NotEqual(t, p.cmd.Process.Pid, started.Pgid)
			t0 := time.Now()
			if tc.setsid {
				// The MDM agent's way: the session ctrld-install leads, at once.
				require.NoError(t, syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL))
			} else {
				require.NoError(t, p.cmd.Process.Kill())
			}
			r := p.wait(t, 5*time.Second)
			assert.Equal(t, -1, r.exit, "killed by the signal")
			took := groupGoneWithin(t, started.Pgid, t0, 4*time.Second)
			t.Logf("ctrld's group gone %s after the kill", took.Round(time.Millisecond))
			assert.Equal(t, "<result>INSTALLER_INTERRUPTED</result>\n", w.status("jamf-ea"))
			w.assertNoCanary(r)
		})
	}
}

// A run waiting for the lock that is stopped leaves the holder's journal
// alone: the record shows the holder running, then the holder's outcome,
// never the waiter's.
func TestSignalWhileWaitingForTheLock(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	w := newWorld(t)
	slow := w.success()
	slow.SleepMS = 3000
	w.script(standin.Script{Start: slow, Status: standin.Action{NeedFile: w.serviceFile}})
	logA, logB := filepath.Join(w.dir, "a.log"), filepath.Join(w.dir, "b.log")
	base := []string{"--ctrld", w.fake, "--home", w.home, "--service-file", w.serviceFile, "--token", canaryToken, "--timeout", "1m"}
	a := startInstaller(t, nil, nil, append(base, "--log", logA)...)
	waitForStart(t, w.argvFile)

	// Watch the record for the whole time both runs live.
	var mu sync.Mutex
	seen := map[string]bool{}
	stop := make(chan struct{})
	var watched sync.WaitGroup
	watched.Add(1)
	go func() {
		defer watched.Done()
		for {
			if rec, err := record.Read(filepath.Join(w.home, record.FileName)); err == nil {
				mu.Lock()
				seen[fmt.Sprintf("%s %s pid=%d", rec.Result, rec.Code, rec.PID)] = true
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()

	b := startInstaller(t, nil, nil, append(base, "--log", logB)...)
	time.Sleep(500 * time.Millisecond)
	require.False(t, b.exited(), "B must be waiting for the lock: %s", b.res.stdout)
	require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
	rb := b.wait(t, time.Minute+runner.DefaultGrace)
	c := codes.Must(codes.InstallerInterrupted)
	assert.Equal(t, 68, rb.exit, rb.stdout+rb.stderr)
	assert.Equal(t, "ctrld-install: "+codes.FailureLine(codes.VerbProvisioning, c), finalLine(rb.stdout))
	bLog, err := os.ReadFile(logB)
	require.NoError(t, err)
	bLines := logLines(t, string(bLog))
	assert.Equal(t, "ctrld-install: "+codes.FailureLine(codes.VerbProvisioning, c), bLines[len(bLines)-1])

	rec := w.record()
	assert.Equal(t, record.ResultRunning, rec.Result, "B must not overwrite A's journal")
	assert.Equal(t, a.cmd.Process.Pid, rec.PID)
	assert.Equal(t, "<result>RUNNING</result>\n", w.status("jamf-ea"))

	ra := a.wait(t, 30*time.Second)
	assert.Equal(t, 0, ra.exit, ra.stdout+ra.stderr)
	time.Sleep(50 * time.Millisecond) // a last look by the watching loop
	close(stop)
	watched.Wait()
	rec = w.record()
	assert.Equal(t, record.ResultOK, rec.Result, "A's outcome")
	assert.Equal(t, "provisioned", rec.Action)
	assert.Len(t, w.argv(), 1, "B never started ctrld")

	mu.Lock()
	defer mu.Unlock()
	for s := range seen {
		assert.NotContains(t, s, codes.InstallerInterrupted, "the record showed B's outcome: %v", seen)
		if strings.HasPrefix(s, record.ResultRunning) {
			assert.Equal(t, fmt.Sprintf("running  pid=%d", a.cmd.Process.Pid), s, "only A's journal")
		}
	}
	assert.True(t, seen["ok OK pid=0"], "the record ends with A's outcome: %v", seen)
	w.assertNoCanary(rb)
}

// status calls a journal entry a run in progress only while a process
// holds the home's lock, whatever process its PID names.
func TestStatusWitnessIsTheLock(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	t.Run("planted journal", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		path := filepath.Join(w.home, record.FileName)
		// A live process that is not a run, and nobody holds the lock.
		require.NoError(t, record.Write(path, record.Running(record.CommandInstall, record.PhaseCtrldRunning, os.Getpid(), "0.2.0-dev", nil, "", time.Now())))
		assert.Equal(t, "<result>INSTALLER_INTERRUPTED</result>\n", w.status("jamf-ea"))

		// A dead process, and the lock held.
		dead := exec.Command("true")
		require.NoError(t, dead.Run())
		require.NoError(t, record.Write(path, record.Running(record.CommandInstall, record.PhaseChecking, dead.Process.Pid, "0.2.0-dev", nil, "", time.Now())))
		l, err := lock.Acquire(context.Background(), w.home)
		require.NoError(t, err)
		assert.Equal(t, "<result>RUNNING</result>\n", w.status("jamf-ea"))
		assert.Contains(t, w.status("text"), fmt.Sprintf("a run is in progress: phase checking, pid %d", dead.Process.Pid))
		l.Release()
		assert.Equal(t, "<result>INSTALLER_INTERRUPTED</result>\n", w.status("jamf-ea"))
		m := w.statusJSON()
		assert.Equal(t, "checking", m["phase"])
	})

	t.Run("a run killed outright", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.script(standin.Script{Start: standin.Action{Hang: true, Stdout: leak}})
		p := startInstaller(t, nil, nil, w.worldArgs("--token", canaryToken, "--timeout", "1m")...)
		started := waitForStart(t, w.argvFile)
		killGroupLater(t, started.Pgid)
		assert.Equal(t, "<result>RUNNING</result>\n", w.status("jamf-ea"))
		require.NoError(t, p.cmd.Process.Kill())
		p.wait(t, 5*time.Second)
		// At once: ctrld may still be in its grace period, but no run holds
		// the lock any more.
		assert.Equal(t, "<result>INSTALLER_INTERRUPTED</result>\n", w.status("jamf-ea"))
		m := w.statusJSON()
		assert.Equal(t, "ctrld-running", m["phase"])
		assert.Equal(t, "INSTALLER_INTERRUPTED", m["code"])
		groupGoneWithin(t, started.Pgid, time.Now(), 5*time.Second)
	})
}

// closedStdout is the write end of a pipe whose reader is gone, as after
// `ctrld-install … | head -c 10` has read its bytes.
func closedStdout(t *testing.T) *os.File {
	t.Helper()
	r, wr, err := os.Pipe()
	require.NoError(t, err)
	require.NoError(t, r.Close())
	t.Cleanup(func() { wr.Close() })
	return wr
}

func TestClosedStdout(t *testing.T) {
	t.Parallel()
	bind := codes.Must(codes.ListenerBindFailed)
	identifier := "ctrld-install: " + codes.FailureLine(codes.VerbProvisioning, bind)

	t.Run("simulate", func(t *testing.T) {
		t.Parallel()
		tmp := emptyDir(t)
		logf := filepath.Join(t.TempDir(), "sim.log")
		p := newProc([]string{"TMPDIR=" + tmp}, "--simulate", "LISTENER_BIND_FAILED", "--log", logf)
		out := closedStdout(t)
		p.cmd.Stdout = out
		p.start(t)
		out.Close()
		r := p.wait(t, 30*time.Second)
		assert.Equal(t, 41, r.exit, r.stderr)
		b, err := os.ReadFile(logf)
		require.NoError(t, err)
		lines := logLines(t, string(b))
		assert.Equal(t, identifier, lines[len(lines)-1], "the log ends with the identifier line")
		assertEmptyDir(t, tmp, "--simulate leaves no temporary home")
	})

	t.Run("real run", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.script(standin.Script{Start: standin.Action{Stdout: append(leak, "provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)"), Exit: 41}})
		tmp := emptyDir(t)
		p := newProc([]string{"TMPDIR=" + tmp}, w.worldArgs("--token", canaryToken)...)
		out := closedStdout(t)
		p.cmd.Stdout = out
		p.start(t)
		out.Close()
		r := p.wait(t, 30*time.Second)
		assert.Equal(t, 41, r.exit, r.stderr)
		lines := logLines(t, w.log())
		assert.Equal(t, identifier, lines[len(lines)-1], "the log ends with the identifier line")
		assert.Equal(t, "ctrld-install: next step: "+bind.NextStep, lines[len(lines)-2])
		rec := w.record()
		assert.Equal(t, 1, rec.Version)
		_, err := time.Parse(time.RFC3339, rec.Timestamp)
		assert.NoError(t, err)
		assert.Equal(t, record.ResultFailed, rec.Result)
		assert.Equal(t, "provisioned", rec.Action)
		assert.Equal(t, "listener", rec.Stage)
		assert.Equal(t, codes.ListenerBindFailed, rec.Code)
		assert.Equal(t, 41, rec.ExitCode)
		assert.Equal(t, "fatal", rec.Class)
		assert.Equal(t, "identifier-line", rec.Source)
		assert.Equal(t, 1, rec.Attempts)
		require.NotNil(t, rec.CtrldVersion)
		assert.Equal(t, "1.5.0", *rec.CtrldVersion)
		assert.NotEmpty(t, rec.InstallerVersion)
		assert.Equal(t, "absent", rec.ResultFile)
		assert.Zero(t, rec.PID)
		assert.Empty(t, rec.Phase)
		assertEmptyDir(t, tmp, "nothing left in TMPDIR")
		w.assertNoCanary(r)
	})
}

// defaultHome is where the binary under test keeps its record when no
// --home is given: under the test root, never the machine's.
func defaultHome() string { return filepath.Join(defaultRoot, platform.Current.Home) }

// homeSnapshot describes what is in dir, for a before-and-after comparison.
func homeSnapshot(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return "no directory"
	}
	require.NoError(t, err)
	var b strings.Builder
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			continue
		}
		content, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		fmt.Fprintf(&b, "%s %v %d %q\n", e.Name(), fi.ModTime().UnixNano(), fi.Size(), content)
	}
	return b.String()
}

func TestUsageErrorsAreRecordedOnlyInTheirHome(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	usage := codes.Must(codes.InstallerUsage)
	usageLine := "ctrld-install: " + codes.FailureLine(codes.VerbProvisioning, usage)

	for _, form := range []string{"--home X", "--home=X"} {
		t.Run("unknown flag with "+form, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			before := homeSnapshot(t, defaultHome())
			home := []string{"--home", w.home}
			if form == "--home=X" {
				home = []string{"--home=" + w.home}
			}
			r := runInstaller(t, nil, "", append(append([]string{"--bogus"}, home...), "--token", canaryToken)...)
			assert.Equal(t, 61, r.exit)
			assert.Equal(t, "ctrld-install: error: an unknown flag was given\n", r.stderr)
			assert.Equal(t, usageLine, finalLine(r.stdout))
			rec := w.record()
			assert.Equal(t, codes.InstallerUsage, rec.Code)
			assert.Equal(t, "installer", rec.Source)
			assert.Equal(t, "<result>INSTALLER_USAGE</result>\n", w.status("jamf-ea"))
			assert.Equal(t, before, homeSnapshot(t, defaultHome()), "nothing recorded in the default home")
			w.assertNoCanary(r)
		})
	}

	t.Run("misspelt --simulate code", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		tmp := emptyDir(t)
		before := homeSnapshot(t, defaultHome())
		r := runInstaller(t, []string{"TMPDIR=" + tmp}, "", "--simulate", "LISTNER_BIND_FAILD", "--home", w.home)
		assert.Equal(t, 61, r.exit)
		assert.True(t, strings.HasPrefix(r.stderr, "ctrld-install: error: --simulate needs a registered code"), r.stderr)
		assert.Equal(t, usageLine, finalLine(r.stdout))
		assertEmptyDir(t, w.home, "a simulation records nothing, not even in the --home given")
		assertEmptyDir(t, tmp, "and leaves no temporary home")
		assert.Equal(t, before, homeSnapshot(t, defaultHome()), "nothing recorded in the default home")
	})

	t.Run("misspelt command", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		before := homeSnapshot(t, defaultHome())
		for _, args := range [][]string{{"stauts"}, {"stauts", "--home", w.home}, {"stauts", "--format", "jamf-ea"}} {
			r := runInstaller(t, nil, "", args...)
			assert.Equal(t, 61, r.exit)
			assert.Equal(t, "ctrld-install: error: unknown command; did you mean status?\n", r.stderr)
			assert.Equal(t, usageLine, finalLine(r.stdout))
			assert.NotContains(t, r.stdout+r.stderr, "stauts", "the typed word is never repeated")
		}
		assertEmptyDir(t, w.home, "a misspelt command records nothing")
		assert.Equal(t, before, homeSnapshot(t, defaultHome()), "nothing recorded in the default home")
	})
}

// A result file that was there before the attempt is not this attempt's,
// whatever its modification time says.
func TestResultFileFromBeforeTheAttempt(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	future := time.Now().Add(time.Hour)
	planted := resultFileJSON(codes.Must(codes.ListenerBindFailed))

	t.Run("ctrld succeeds", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		plant(t, w.resultFile, planted, 0o600, future)
		w.script(standin.Script{Start: w.success(), Status: standin.Action{NeedFile: w.serviceFile}})
		r := w.run("--token", canaryToken)
		w.assertSuccess(r)
		assert.Equal(t, "stale", w.record().ResultFile)
	})

	t.Run("ctrld fails with output nobody understands", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		plant(t, w.resultFile, planted, 0o600, future)
		w.script(standin.Script{Start: standin.Action{Stdout: leak[1:], Exit: 1}})
		r := w.run("--token", canaryToken, "--retries", "0")
		w.assertFailure(r, codes.CtrldFailedUnclassified, "exit-status")
		assert.Equal(t, "stale", w.record().ResultFile)
	})

	t.Run("ctrld rewrites it during the attempt", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		plant(t, w.resultFile, planted, 0o600, future)
		w.script(standin.Script{Start: standin.Action{
			WriteFiles: map[string]string{w.resultFile: resultFileJSON(codes.Must(codes.APIRejected))}, Exit: 32,
		}})
		r := w.run("--token", canaryToken, "--retries", "0")
		w.assertFailure(r, codes.APIRejected, "result-file")
		assert.Equal(t, "used", w.record().ResultFile)
	})
}

// A home someone else could control is refused before anything is written
// in it, and the message names the check and the flag, never the path.
func TestUnsafeHomeIsRefused(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	for _, tc := range []struct {
		name  string
		make  func(t *testing.T, w *world) (home, inside string) // inside: where a write would land
		check string
	}{
		{"symlink to a directory", func(t *testing.T, w *world) (string, string) {
			target := filepath.Join(w.dir, "real-home")
			require.NoError(t, os.Mkdir(target, 0o755))
			home := filepath.Join(w.dir, "home-"+canaryLower)
			require.NoError(t, os.Symlink(target, home))
			return home, target
		}, "is a symbolic link"},
		{"dangling symlink", func(t *testing.T, w *world) (string, string) {
			target := filepath.Join(w.dir, "not-yet-a-home")
			home := filepath.Join(w.dir, "home-"+canaryLower)
			require.NoError(t, os.Symlink(target, home))
			return home, target
		}, "is a symbolic link"},
		{"group-writable", func(t *testing.T, w *world) (string, string) {
			home := filepath.Join(w.dir, "home-"+canaryLower)
			require.NoError(t, os.Mkdir(home, 0o755))
			require.NoError(t, os.Chmod(home, 0o775))
			return home, home
		}, "is writable by group or others"},
		{"other-writable", func(t *testing.T, w *world) (string, string) {
			home := filepath.Join(w.dir, "home-"+canaryLower)
			require.NoError(t, os.Mkdir(home, 0o755))
			require.NoError(t, os.Chmod(home, 0o757))
			return home, home
		}, "is writable by group or others"},
		{"world-writable and sticky", func(t *testing.T, w *world) (string, string) {
			home := filepath.Join(w.dir, "home-"+canaryLower)
			require.NoError(t, os.Mkdir(home, 0o755))
			require.NoError(t, os.Chmod(home, 0o777|os.ModeSticky))
			return home, home
		}, "is writable by group or others"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			home, inside := tc.make(t, w)
			w.home, w.resultFile = home, filepath.Join(home, "provision_result.json")
			w.script(standin.Script{Start: w.success(), Status: standin.Action{NeedFile: w.serviceFile},
				Uninstall: standin.Action{RemoveFiles: []string{w.serviceFile}}})
			failed := codes.Must(codes.InstallerHomeUnsafe)
			refusal := "ctrld-install: error: the home directory (--home) " + tc.check + "; refusing to use it\n"

			r := w.run("--token", canaryToken)
			assert.Equal(t, failed.Exit, r.exit, r.stdout+r.stderr)
			assert.Equal(t, refusal, r.stderr)
			assert.Equal(t, "ctrld-install: "+codes.FailureLine(codes.VerbProvisioning, failed), finalLine(r.stdout))
			assert.NotContains(t, r.stdout+r.stderr+w.log(), home)
			assert.NotContains(t, r.stdout+r.stderr+w.log(), canaryLower)
			assert.Empty(t, actions(t, w.argvFile), "ctrld must not run")

			require.NoError(t, os.WriteFile(w.serviceFile, []byte("[Unit]\n"), 0o644))
			r = w.uninstall("")
			assert.Equal(t, failed.Exit, r.exit, r.stdout+r.stderr)
			assert.Equal(t, refusal, r.stderr)
			assert.Equal(t, "ctrld-install: "+codes.FailureLine(codes.VerbUninstall, failed), finalLine(r.stdout))
			assert.FileExists(t, w.serviceFile, "ctrld uninstall must not run")

			r = runInstaller(t, nil, "", "--bogus", "--home", home)
			assert.Equal(t, 61, r.exit)

			if _, err := os.Lstat(inside); err == nil {
				assertEmptyDir(t, inside, "nothing is written in a refused home")
			} else {
				assert.True(t, os.IsNotExist(err), "a dangling link's target is not created: %v", err)
			}
			fi, err := os.Lstat(home)
			require.NoError(t, err)
			if tc.check == "is a symbolic link" {
				assert.NotZero(t, fi.Mode()&os.ModeSymlink, "the link is left as it was")
			}
		})
	}
}

// The record holds no secret: the home is 0755 and the record 0644, so an
// inventory script running as an ordinary user can read status.
func TestStatusWorksForAnOrdinaryUser(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("running status as another user needs root")
	}
	base, err := os.MkdirTemp("", "ctrld-install-status-*")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	w := &world{
		t:           t,
		dir:         base,
		home:        filepath.Join(base, "home"),
		serviceFile: filepath.Join(base, "service", "ctrld.service"),
		logFile:     filepath.Join(base, "install.log"),
		argvFile:    filepath.Join(base, "argv.jsonl"),
	}
	w.resultFile = filepath.Join(w.home, "provision_result.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(w.serviceFile), 0o755))
	bin := filepath.Join(base, "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	// Links, not copies: an executable being written while a parallel test
	// forks cannot be run (golang/go#22315).
	w.fake, err = standin.Link(bin, standinMaster, standin.Script{})
	require.NoError(t, err)
	installer := filepath.Join(base, "ctrld-install")
	require.NoError(t, os.Link(installerBin, installer))

	running := standin.Action{NeedFile: w.serviceFile}
	w.script(standin.Script{Start: w.success(), Status: running})
	w.assertSuccess(w.run("--token", canaryToken))
	fi, err := os.Stat(w.home)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), "the home is created 0755")
	fi, err = os.Stat(filepath.Join(w.home, record.FileName))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm(), "the record is 0644")

	asNobody := func(args ...string) result {
		cmd := exec.Command(installer, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		cmd.Dir = "/"
		cmd.Env = cleanEnv()
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		r := result{stdout: out.String(), stderr: errb.String()}
		if ee, ok := err.(*exec.ExitError); ok {
			r.exit = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return r
	}
	r := asNobody("status", "--home", w.home, "--format", "jamf-ea")
	assert.Equal(t, 0, r.exit, r.stderr)
	assert.Equal(t, "<result>OK</result>\n", r.stdout)
	r = asNobody("status", "--home", w.home)
	assert.Equal(t, "ctrld-install: provisioning succeeded (exit 0)", finalLine(r.stdout))
	r = asNobody("status", "--home", w.home, "--format", "json")
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &m), r.stdout)
	assert.Equal(t, "OK", m["code"])

	// While a run holds the lock, an ordinary user sees it running too.
	hangs := filepath.Join(base, "hang.jsonl")
	w.script(standin.Script{Start: standin.Action{Record: hangs, Hang: true}, Status: running})
	p := startInstaller(t, nil, nil, w.worldArgs("--token", canaryToken, "--timeout", "1m", "--force")...)
	started := waitForStart(t, hangs)
	killGroupLater(t, started.Pgid)
	assert.Equal(t, "<result>RUNNING</result>\n", w.status("jamf-ea"), "as root")
	r = asNobody("status", "--home", w.home, "--format", "jamf-ea")
	assert.Equal(t, "<result>RUNNING</result>\n", r.stdout, "as an ordinary user")
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	p.wait(t, 10*time.Second)
	groupGoneWithin(t, started.Pgid, time.Now(), 5*time.Second)
}

// A write to a closed stdout in the first moments of a run, before main's
// signal handlers are in place, fails with the write error's exit status;
// it does not end the process with SIGPIPE. codes writes at once.
func TestClosedStdoutAtOnce(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	for i := range 20 {
		cmd := exec.Command(installerBin, "codes")
		cmd.Env = cleanEnv()
		cmd.Stdout = closedStdout(t)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "run %d", i)
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("run %d: ctrld-install was killed by %v", i, ws.Signal())
		}
		require.Equal(t, 60, ee.ExitCode(), "run %d: %s", i, stderr.String())
		require.Equal(t, "ctrld-install: error: the output cannot be written\n", stderr.String(), "run %d", i)
	}
}
