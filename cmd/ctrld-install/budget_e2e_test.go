//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/lock"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// The world does not wait for ctrld-install: a ctrld slower than every
// internal deadline, a stdout nobody reads, a terminal that stops reading.
// Each run still ends within its budget and the documented seconds past it,
// with its final line in the --log file, its record written and the home's
// lock free.

// A ctrld whose --version and status each take 5 s, longer than any
// deadline ctrld-install keeps of its own (the watcher's 2 s to be ready):
// a cold disk, a security agent's scan of a first launch, Gatekeeper's
// first assessment. The run waits for them within its budget and goes on.
func TestSlowCtrldVersionAndStatus(t *testing.T) {
	t.Parallel()
	slow := func(w *world) {
		status := standin.Action{NeedFile: w.serviceFile, SleepMS: 5000}
		w.script(standin.Script{VersionRun: &standin.Action{SleepMS: 5000}, Start: w.success(), Status: status})
	}
	t.Run("within the budget", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		slow(w)
		r := w.run("--token", canaryToken, "--timeout", "40s")
		w.assertSuccess(r)
		assertWithinBudget(t, r.elapsed, 40*time.Second)
		w.assertLockFree()
	})
	t.Run("past the budget", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		slow(w)
		r := w.run("--token", canaryToken, "--timeout", "3s")
		w.assertFailure(r, codes.CtrldTimeout, "")
		assertWithinBudget(t, r.elapsed, 3*time.Second)
		assert.Empty(t, w.startsRecorded(), "ctrld start ran after the budget was spent in ctrld --version")
		w.assertLockFree()
	})
}

// A stdout that is a full pipe nobody reads, as an RMM agent that reads a
// script's output only after it exits: install, verify and uninstall end
// within their budget, with everything in the --log file and the record.
func TestStdoutNeverRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		args      []string
		finalLine string
		sameErr   bool // stderr is the same pipe (2>&1)
	}{
		{"install", []string{"--token", canaryToken}, "ctrld-install: provisioning succeeded (exit 0)", false},
		{"install 2>&1", []string{"--token", canaryToken}, "ctrld-install: provisioning succeeded (exit 0)", true},
		{"verify", []string{"verify"}, "", false},
		{"uninstall", []string{"uninstall"}, "ctrld-install: uninstall succeeded (exit 0)", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name != "install" {
				fullE2E(t)
			}
			t.Parallel()
			w := newWorld(t)
			w.script(standin.Script{
				Start:     w.success(),
				Status:    standin.Action{NeedFile: w.serviceFile},
				Uninstall: standin.Action{RemoveFiles: []string{w.serviceFile}},
			})
			if tc.args[0] != "--token" {
				require.NoError(t, os.WriteFile(w.serviceFile, []byte("[Unit]\n"), 0o644))
			}
			args := append(append([]string{}, tc.args...), "--ctrld", w.fake, "--home", w.home, "--service-file", w.serviceFile, "--timeout", "5s")
			// verify keeps no log and no record: its exit status is its word.
			if tc.name != "verify" {
				args = append(args, "--log", w.logFile)
			}
			cmd := exec.Command(installerBin, args...)
			cmd.Env = cleanEnv()
			_, full := smallFullPipe(t)
			var errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = full, &errb
			if tc.sameErr {
				cmd.Stderr = full
			}
			r := runToEnd(t, cmd, 5*time.Second)
			assert.Equal(t, 0, r.exit, "stderr: %s; log:\n%s", errb.String(), w.log())
			assertWithinBudget(t, r.elapsed, 5*time.Second)
			if tc.name != "verify" {
				assert.True(t, strings.HasSuffix(strings.TrimRight(w.log(), "\n"), tc.finalLine), "the log's last line; log:\n%s", w.log())
				assert.Equal(t, codes.OK, w.record().Code)
				assert.Equal(t, record.ResultOK, w.record().Result)
				w.assertLockFree()
			}
		})
	}
}

// A terminal that stops reading: output stopped with Ctrl-S and its
// buffer full. The run is not held by it past its budget.
func TestTerminalThatStopsReading(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	w := newWorld(t)
	w.script(standin.Script{Start: w.success(), Status: standin.Action{NeedFile: w.serviceFile}})
	tty := stoppedTerminal(t)
	cmd := exec.Command(installerBin, "--token", canaryToken, "--ctrld", w.fake, "--home", w.home,
		"--service-file", w.serviceFile, "--log", w.logFile, "--timeout", "5s")
	cmd.Env = cleanEnv()
	cmd.Stdout, cmd.Stderr = tty, tty
	r := runToEnd(t, cmd, 5*time.Second)
	assert.Equal(t, 0, r.exit, w.log())
	assertWithinBudget(t, r.elapsed, 5*time.Second)
	assert.True(t, strings.HasSuffix(strings.TrimRight(w.log(), "\n"), "ctrld-install: provisioning succeeded (exit 0)"), w.log())
	assert.Equal(t, codes.OK, w.record().Code)
	w.assertLockFree()
}

// Descriptors 3 to 9, left open by the caller (an MDM agent's pipes), do
// not reach ctrld nor what it leaves running: once ctrld-install has
// exited, each pipe ends for its reader although the process ctrld start
// left behind still runs.
func TestInheritedDescriptorsDoNotReachCtrld(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := w.success()
	a.Grandchild = true // a daemon-like process that outlives ctrld start
	w.script(standin.Script{Start: a, Status: standin.Action{NeedFile: w.serviceFile}})
	cmd := exec.Command(installerBin, "--token", canaryToken, "--ctrld", w.fake, "--home", w.home,
		"--service-file", w.serviceFile, "--timeout", "30s")
	cmd.Env = cleanEnv()
	var readers []*os.File
	for range 7 {
		r, wr, err := os.Pipe()
		require.NoError(t, err)
		t.Cleanup(func() { r.Close() })
		readers = append(readers, r)
		cmd.ExtraFiles = append(cmd.ExtraFiles, wr)
	}
	res := runToEnd(t, cmd, 30*time.Second)
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
	killGroupLater(t, w.argv()[0].Pgid)
	require.Equal(t, 0, res.exit, res.stdout+res.stderr)
	for i, r := range readers {
		require.NoError(t, r.SetReadDeadline(time.Now().Add(5*time.Second)))
		var b [1]byte
		_, err := r.Read(b[:])
		assert.NotErrorIs(t, err, os.ErrDeadlineExceeded, "descriptor %d is still held open by what ctrld start left running", i+3)
	}
}

// The signals Go would turn into a crash, sent by another process, end
// the run as any interruption does: ctrld stopped, INSTALLER_INTERRUPTED,
// the record and the final line.
func TestCrashSignalsInterruptTheRun(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGQUIT, syscall.SIGABRT, syscall.SIGTRAP, syscall.SIGSYS,
		syscall.SIGILL, syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.script(standin.Script{Start: standin.Action{Hang: true, Stdout: leak}})
			p := startInstaller(t, nil, nil, w.worldArgs("--token", canaryToken, "--timeout", "1m")...)
			waitForStart(t, w.argvFile)
			require.NoError(t, p.cmd.Process.Signal(sig))
			r := p.wait(t, time.Minute+10*time.Second)
			assert.NotContains(t, r.stderr, "goroutine ", "a stack dump")
			w.assertFailure(r, codes.InstallerInterrupted, "installer")
			w.assertGroupGone()
			w.assertLockFree()
		})
	}
}

func (w *world) assertLockFree() {
	w.t.Helper()
	held, err := lock.Held(w.home)
	require.NoError(w.t, err)
	assert.False(w.t, held, "the home's lock is still held after the run")
	assert.NotEqual(w.t, record.ResultRunning, w.record().Result, "the record still says running")
}

// startsRecorded is every ctrld start the stand-in recorded, none when it
// recorded nothing.
func (w *world) startsRecorded() []standin.Record {
	if _, err := os.Stat(w.argvFile); err != nil {
		return nil
	}
	return w.argv()
}

// runToEnd runs cmd, failing the test if it is still there well past its
// budget and the seconds after it (it is then killed).
func runToEnd(t *testing.T, cmd *exec.Cmd, budget time.Duration) result {
	t.Helper()
	require.NoError(t, cmd.Start())
	t0 := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(budget + time.Minute):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("ctrld-install still ran a minute past its %v budget", budget)
	}
	r := result{elapsed: time.Since(t0)}
	if b, ok := cmd.Stdout.(*bytes.Buffer); ok {
		r.stdout = b.String()
	}
	if b, ok := cmd.Stderr.(*bytes.Buffer); ok {
		r.stderr = b.String()
	}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return r
}

// smallFullPipe is a pipe of 4 KiB, filled, that nobody reads.
func smallFullPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(); w.Close() })
	// Not w.Fd(): that would put the pipe in blocking mode, and the
	// deadlines below would no longer end the filling writes.
	raw, err := w.SyscallConn()
	require.NoError(t, err)
	var sizeErr error
	require.NoError(t, raw.Control(func(fd uintptr) { _, sizeErr = unix.FcntlInt(fd, unix.F_SETPIPE_SZ, 4096) }))
	require.NoError(t, sizeErr)
	chunk := make([]byte, 512)
	for {
		require.NoError(t, w.SetWriteDeadline(time.Now().Add(50*time.Millisecond)))
		if _, err := w.Write(chunk); err != nil {
			break
		}
	}
	require.NoError(t, w.SetWriteDeadline(time.Time{}))
	return r, w
}

// stoppedTerminal is the terminal side of a new pseudo-terminal whose
// output was stopped with Ctrl-S, its buffer full: a write to it blocks.
func stoppedTerminal(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	raw, err := ptmx.SyscallConn()
	require.NoError(t, err)
	var n int
	var ioErr error
	require.NoError(t, raw.Control(func(fd uintptr) {
		if ioErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ioErr == nil {
			n, ioErr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
		}
	}))
	require.NoError(t, ioErr)
	name := filepath.Join("/dev/pts", strconv.Itoa(n))
	// Output stopped as a person's Ctrl-S does (IXON is on by default).
	_, err = ptmx.Write([]byte{0x13})
	require.NoError(t, err)
	filler, err := os.OpenFile(name, os.O_WRONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	require.NoError(t, err)
	defer filler.Close()
	chunk := bytes.Repeat([]byte("x"), 512)
	for {
		require.NoError(t, filler.SetWriteDeadline(time.Now().Add(50*time.Millisecond)))
		if _, err := filler.Write(chunk); err != nil {
			break
		}
	}
	tty, err := os.OpenFile(name, os.O_WRONLY|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { tty.Close() })
	return tty
}
