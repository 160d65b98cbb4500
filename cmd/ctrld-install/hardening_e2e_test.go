//go:build unix

package main

import (
	"bytes"
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
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// Two runs on one home directory never have ctrld start running at once:
// the second waits for the lock, then finds the machine provisioned.
func TestLockSerialisesRuns(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	w := newWorld(t)
	slow := w.success()
	slow.SleepMS = 1500
	w.script(standin.Script{Start: slow})

	var wg sync.WaitGroup
	results := make([]result, 2)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if i == 1 {
				time.Sleep(300 * time.Millisecond)
			}
			results[i] = runInstaller(t, nil, "", "--ctrld", w.fake, "--home", w.home, "--service-file", w.serviceFile,
				"--token", canaryToken, "--timeout", "1m", "--force")
		}(i)
	}
	wg.Wait()
	for _, r := range results {
		assert.Equal(t, 0, r.exit, r.stdout+r.stderr)
	}
	ev := w.events()
	require.Len(t, ev, 4, "two starts and two ends")
	// start, end, start, end: never two starts in a row.
	for i, want := range []string{"start", "end", "start", "end"} {
		assert.Equal(t, want, ev[i].Event, "event %d", i)
	}
	assert.Greater(t, results[1].elapsed, time.Second, "the second run waited for the first")
}

func TestLockBusyWhenTheBudgetRunsOut(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	w := newWorld(t)
	w.script(standin.Script{Start: standin.Action{Hang: true}})
	first := exec.Command(installerBin, "--ctrld", w.fake, "--home", w.home, "--service-file", w.serviceFile,
		"--token", canaryToken, "--timeout", "1m")
	first.Env = cleanEnv()
	require.NoError(t, first.Start())
	t.Cleanup(func() {
		_ = first.Process.Signal(syscall.SIGTERM)
		_ = first.Wait()
	})
	require.Eventually(t, func() bool { _, err := os.Stat(w.argvFile); return err == nil }, 10*time.Second, 20*time.Millisecond)

	r := w.run("--token", canaryToken, "--timeout", "1s")
	assert.Equal(t, 66, r.exit)
	assert.True(t, strings.HasSuffix(r.stdout, "ctrld-install: provisioning failed: stage=installer code=INSTALLER_BUSY (exit 66)\n"), "the identifier line is the last line: %s", r.stdout)
	assert.Len(t, w.argv(), 1, "the second run must not start ctrld")

	// A detection script's verify meets the same run, whose service file
	// does not exist yet: a run in progress, not "not installed".
	v := w.run("verify", "--ctrld", w.fake, "--home", w.home, "--service-file", w.serviceFile, "--timeout", "1s")
	assert.Equal(t, 66, v.exit, v.stdout+v.stderr)
	assert.True(t, strings.HasSuffix(v.stdout, "ctrld-install: verify failed: stage=installer code=INSTALLER_BUSY (exit 66)\n"), v.stdout)

	rec := w.record()
	assert.Equal(t, record.ResultRunning, rec.Result, "the busy run must not overwrite the first run's journal")
	assert.Equal(t, first.Process.Pid, rec.PID)
	w.assertNoCanary(r)
}

// ctrld-install's memory stays bounded however much ctrld prints. The peak
// is the process's own high-water mark (VmHWM), sampled until it exits:
// wait4's ru_maxrss would include the test binary's peak, which a child
// inherits at exec.
func TestPeakMemoryWhileCtrldPrints500MB(t *testing.T) {
	t.Parallel()
	// 500 MB costs seconds of CPU on a 2-core machine; the everyday run
	// prints 16 MiB, 256 times the longest line ctrld-install keeps and far
	// past every buffer, and CI the full size (CTRLD_INSTALL_MEMORY_FULL=1).
	flood := int64(16 << 20)
	if os.Getenv("CTRLD_INSTALL_MEMORY_FULL") == "1" {
		flood = 500 << 20
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to read the process's own peak")
	}
	w := newWorld(t)
	a := w.success()
	a.FloodBytes = flood
	w.script(standin.Script{Start: a})
	cmd := exec.Command(installerBin, "--ctrld", w.fake, "--home", w.home, "--service-file", w.serviceFile, "--token", canaryToken)
	cmd.Env = cleanEnv()
	var out bytes.Buffer
	cmd.Stdout = &out
	require.NoError(t, cmd.Start())
	status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var peakKB int64
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case err := <-done:
			require.NoError(t, err)
			waiting = false
		case <-tick.C:
			if kb := highWaterKB(status); kb > peakKB {
				peakKB = kb
			}
		}
	}
	require.NotZero(t, peakKB, "no sample of the process was taken")
	t.Logf("peak RSS of ctrld-install while ctrld printed %d MiB: %.1f MiB", flood>>20, float64(peakKB)/1024)
	assert.Less(t, peakKB*1024, int64(32<<20))
	assert.True(t, strings.HasSuffix(out.String(), "ctrld-install: provisioning succeeded (exit 0)\n"), "the success line is the last line")
}

func highWaterKB(statusPath string) int64 {
	b, err := os.ReadFile(statusPath)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		var kb int64
		if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &kb); err == nil {
			return kb
		}
	}
	return 0
}

// Whatever bytes ctrld prints, the run ends with a registered code, in
// bounded time, and nothing of it reaches any surface.
func TestHostileOutput(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	for _, tc := range []struct {
		name string
		a    standin.Action
		code string
	}{
		{"no trailing newline", standin.Action{RawStdout: []byte("provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)"), Exit: 41}, codes.ListenerBindFailed},
		{"NUL bytes", standin.Action{RawStdout: []byte("FTL failed to fetch\x00 resolver " + canaryToken + "\x00\n"), Exit: 1}, codes.CtrldFailedUnclassified},
		{"invalid UTF-8", standin.Action{RawStdout: []byte("\xff\xfe" + canaryToken + "\xc3\x28\n"), Exit: 1}, codes.CtrldFailedUnclassified},
		{"token fatal with invalid UTF-8 around it", standin.Action{RawStdout: []byte("Nov 29 12:20:10.000 FTL failed to fetch resolver uid with provision token: " + canaryToken + "\xff error=\"invalid provision token\"\n"), Exit: 1}, codes.APIRejected},
		{"10 MB line", standin.Action{Stdout: []string{canaryToken}, LongLine: 10 << 20, Exit: 1}, codes.CtrldFailedUnclassified},
		{"identifier line with text before it", standin.Action{Stdout: []string{"x provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)"}, Exit: 1}, codes.CtrldFailedUnclassified},
		{"identifier line with text after it", standin.Action{Stdout: []string{"provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41) " + canaryToken}, Exit: 41}, codes.CtrldFailedUnclassified},
		{"identifier line disagreeing with the registry", standin.Action{Stdout: []string{"provisioning failed: stage=service code=LISTENER_BIND_FAILED (exit 41)"}, Exit: 41}, codes.CtrldFailedUnclassified},
		{"ANSI storm", standin.Action{RawStdout: []byte(strings.Repeat("\x1b[", 10000) + canaryToken + "\n"), Exit: 1}, codes.CtrldFailedUnclassified},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.script(standin.Script{Start: tc.a})
			r := w.run("--token", canaryToken, "--retries", "0", "--timeout", "30s")
			w.assertFailure(r, tc.code, "")
			assertWithinBudget(t, r.elapsed, 30*time.Second)
		})
	}
}

// A result file ctrld-install cannot trust is ignored and reported, never
// read for its code, and opening it never blocks.
func TestHostileResultFiles(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	good := resultFileJSON(codes.Must(codes.ListenerBindFailed))
	future := time.Now().Add(time.Hour)
	for _, tc := range []struct {
		name   string
		plant  func(t *testing.T, w *world)
		status string
		code   string
	}{
		{"symlink to a good file", func(t *testing.T, w *world) {
			target := filepath.Join(w.dir, "elsewhere.json")
			require.NoError(t, os.WriteFile(target, []byte(good), 0o600))
			require.NoError(t, os.Chtimes(target, future, future))
			require.NoError(t, os.Symlink(target, w.resultFile))
		}, "untrusted", codes.CtrldFailedUnclassified},
		{"FIFO", func(t *testing.T, w *world) {
			require.NoError(t, syscall.Mkfifo(w.resultFile, 0o600))
		}, "untrusted", codes.CtrldFailedUnclassified},
		{"directory", func(t *testing.T, w *world) {
			require.NoError(t, os.Mkdir(w.resultFile, 0o700))
		}, "untrusted", codes.CtrldFailedUnclassified},
		{"10 MB", func(t *testing.T, w *world) {
			plant(t, w.resultFile, good[:len(good)-1]+`,"pad":"`+strings.Repeat(canaryToken, (10<<20)/len(canaryToken))+`"}`, 0o600, future)
		}, "untrusted", codes.CtrldFailedUnclassified},
		{"group writable", func(t *testing.T, w *world) { plant(t, w.resultFile, good, 0o620, future) }, "untrusted", codes.CtrldFailedUnclassified},
		{"world writable", func(t *testing.T, w *world) { plant(t, w.resultFile, good, 0o606, future) }, "untrusted", codes.CtrldFailedUnclassified},
		{"owned by another user", func(t *testing.T, w *world) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give a file away")
			}
			plant(t, w.resultFile, good, 0o600, future)
			require.NoError(t, os.Lchown(w.resultFile, 65534, 65534))
		}, "untrusted", codes.CtrldFailedUnclassified},
		{"truncated JSON", func(t *testing.T, w *world) { plant(t, w.resultFile, good[:len(good)/2], 0o600, future) }, "invalid", codes.CtrldFailedUnclassified},
		{"deeply nested JSON", func(t *testing.T, w *world) {
			plant(t, w.resultFile, `{"version":1,"stage":"listener","code":"LISTENER_BIND_FAILED","exit_code":41,"detail":`+
				strings.Repeat("[", 30000)+strings.Repeat("]", 30000)+`}`, 0o600, future)
		}, "invalid", codes.CtrldFailedUnclassified},
		{"unknown fields", func(t *testing.T, w *world) {
			plant(t, w.resultFile, good[:len(good)-1]+`,"new_field":{"x":"`+canaryToken+`"}}`, 0o600, future)
		}, "used", codes.ListenerBindFailed},
		{"unknown code carrying the token", func(t *testing.T, w *world) {
			plant(t, w.resultFile, strings.Replace(good, "LISTENER_BIND_FAILED", canaryToken, 1), 0o600, future)
		}, "invalid", codes.CtrldFailedUnclassified},
		{"stage disagrees with the registry", func(t *testing.T, w *world) {
			plant(t, w.resultFile, strings.Replace(good, `"stage":"listener"`, `"stage":"service"`, 1), 0o600, future)
		}, "invalid", codes.CtrldFailedUnclassified},
		{"exit disagrees with the registry", func(t *testing.T, w *world) {
			plant(t, w.resultFile, strings.Replace(good, `"exit_code":41`, `"exit_code":40`, 1), 0o600, future)
		}, "invalid", codes.CtrldFailedUnclassified},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			tc.plant(t, w)
			// What is there before ctrld starts is never its evidence:
			// the file is moved into place while ctrld runs, as ctrld
			// renames its result file into place.
			staged := filepath.Join(w.dir, "staged-result")
			require.NoError(t, os.Rename(w.resultFile, staged))
			w.script(standin.Script{Start: standin.Action{MoveFiles: map[string]string{staged: w.resultFile}, Stdout: leak[1:], Exit: 1}})
			r := w.run("--token", canaryToken, "--retries", "0", "--timeout", "30s")
			assertWithinBudget(t, r.elapsed, 30*time.Second)
			w.assertFailure(r, tc.code, "")
			assert.Equal(t, tc.status, w.record().ResultFile)
		})
	}
}

func plant(t *testing.T, path, body string, mode os.FileMode, mtime time.Time) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	require.NoError(t, os.Chmod(path, mode))
	require.NoError(t, os.Chtimes(path, mtime, mtime))
}

// Faults in ctrld-install's own writes never cost the printed line or the
// exit status, and leave no partial record.
func TestOwnWriteFaults(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	failing := standin.Action{Stdout: []string{"provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)"}, Exit: 41}
	const line = "ctrld-install: provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)\n"

	t.Run("home missing is created", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		require.NoError(t, os.RemoveAll(w.home))
		w.script(standin.Script{Start: failing})
		r := w.run("--token", canaryToken)
		w.assertFailure(r, codes.ListenerBindFailed, "identifier-line")
		fi, err := os.Stat(w.home)
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), "the record holds no secret: status works without root")
	})
	t.Run("log directory missing", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.logFile = filepath.Join(w.dir, "no", "such", "dir", "install.log")
		w.script(standin.Script{Start: failing})
		r := w.run("--token", canaryToken)
		assert.Equal(t, 41, r.exit)
		assert.Contains(t, r.stdout, line)
		assert.Equal(t, "ctrld-install: error: cannot open the log file; continuing without it\n", r.stderr)
		assert.Equal(t, codes.ListenerBindFailed, w.record().Code)
	})
	t.Run("log path is a symlink", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		target := filepath.Join(w.dir, "target")
		require.NoError(t, os.WriteFile(target, nil, 0o600))
		require.NoError(t, os.Symlink(target, w.logFile))
		w.script(standin.Script{Start: failing})
		r := w.run("--token", canaryToken)
		assert.Equal(t, 41, r.exit)
		assert.Contains(t, r.stderr, "cannot open the log file")
		b, _ := os.ReadFile(target)
		assert.Empty(t, b, "a root process must not follow a planted symlink")
	})
	t.Run("record cannot be renamed into place", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		require.NoError(t, os.Mkdir(filepath.Join(w.home, record.FileName), 0o755))
		w.script(standin.Script{Start: failing})
		r := w.run("--token", canaryToken)
		assert.Equal(t, 41, r.exit)
		assert.Contains(t, r.stdout, line)
		assert.Equal(t, "ctrld-install: error: the outcome record cannot be written in the home directory (--home)\n", r.stderr)
		tmp, _ := filepath.Glob(filepath.Join(w.home, ".ctrld-install-result-*"))
		assert.Empty(t, tmp, "no partial record is left")
	})
	t.Run("read-only file system", func(t *testing.T) {
		t.Parallel()
		if os.Geteuid() != 0 {
			t.Skip("mounting needs root")
		}
		w := newWorld(t)
		if err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m,mode=0755", "tmpfs", w.home).Run(); err != nil {
			t.Skipf("cannot mount a read-only tmpfs here: %v", err)
		}
		t.Cleanup(func() { _ = exec.Command("umount", w.home).Run() })
		w.script(standin.Script{Start: failing})
		r := w.run("--token", canaryToken)
		assert.Equal(t, 41, r.exit)
		assert.Contains(t, r.stdout, line)
		assert.Equal(t, "ctrld-install: error: the home directory (--home) cannot hold the run lock and the outcome record; continuing without them\n", r.stderr)
		assert.Len(t, w.argv(), 1)
		_, err := os.Stat(filepath.Join(w.home, record.FileName))
		assert.True(t, os.IsNotExist(err))
	})
}

// A token misplaced into a path flag goes nowhere either: paths from the
// command line are never repeated, even when they cannot be used.
func TestTokenInPathFlags(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	blocker := filepath.Join(w.dir, "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o600))
	w.home = filepath.Join(blocker, canaryLower)
	w.resultFile = filepath.Join(w.home, "provision_result.json")
	w.script(standin.Script{Start: standin.Action{Stdout: []string{"provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)"}, Exit: 41}})
	r := w.run("--token", canaryToken, "--result-file", filepath.Join(w.dir, canaryLower+".json"))
	assert.Equal(t, 41, r.exit)
	assert.Contains(t, r.stderr, "the home directory (--home) cannot hold the run lock")
	w.assertNoCanary(r)

	w2 := newWorld(t)
	w2.script(standin.Script{Start: w2.success()})
	w2.logFile = filepath.Join(w2.dir, "missing", canaryLower)
	r = w2.run("--token", canaryToken)
	assert.Equal(t, 0, r.exit)
	assert.Equal(t, "ctrld-install: error: cannot open the log file; continuing without it\n", r.stderr)
	w2.assertNoCanary(r)
}

// A FIFO where the log or the record should be must not hang the run or status.
func TestFIFOsInPlaceOfFiles(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	require.NoError(t, syscall.Mkfifo(w.logFile, 0o600))
	w.script(standin.Script{Start: w.success()})
	r := w.run("--token", canaryToken, "--timeout", "30s")
	assert.Equal(t, 0, r.exit)
	assert.Contains(t, r.stderr, "cannot open the log file")
	assertWithinBudget(t, r.elapsed, 30*time.Second)

	w2 := newWorld(t)
	require.NoError(t, syscall.Mkfifo(filepath.Join(w2.home, record.FileName), 0o600))
	r = runInstaller(t, nil, "", "status", "--home", w2.home, "--format", "jamf-ea")
	assert.Equal(t, "<result>INVALID_RECORD</result>\n", r.stdout)
}
