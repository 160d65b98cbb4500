//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// The lifecycle of a device after its first install: a package replaces
// ctrld under the running service, verify checks a minimum version, and
// uninstall takes ctrld away. Helpers shared by lifecycle_e2e_test.go,
// triage_e2e_test.go and faults_e2e_test.go live here.

// lifecyclePIN stands for a deactivation PIN: digits only, as ctrld wants it,
// and long enough not to turn up by chance in a PID or a duration.
const lifecyclePIN = "97531864"

// anyFailureLineRE is the identifier line of any command ctrld-install runs.
var anyFailureLineRE = regexp.MustCompile(`^ctrld-install: (provisioning|uninstall|verify) failed: stage=([a-z]*) code=([A-Z_]*) \(exit ([0-9]*)\)$`)

// headerRE is the first line every run writes into --log.
var headerRE = regexp.MustCompile(`^[0-9TZ:-]+ ctrld-install: run started: ctrld-install (\S+), command ([a-z]+), exit profile ([a-z]+), pid ([0-9]+)$`)

// finalLine is the last line of s, without its newline.
func finalLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// logLines are the log's lines with their timestamps cut off.
func logLines(t *testing.T, log string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(strings.TrimRight(log, "\n"), "\n") {
		if l == "" {
			continue
		}
		ts, rest, ok := strings.Cut(l, " ")
		require.True(t, ok, l)
		_, err := time.Parse(time.RFC3339, ts)
		require.NoError(t, err, l)
		out = append(out, rest)
	}
	return out
}

// actions reads a stand-in Record file: one entry per command run with
// that Record. A missing file is no run.
func actions(t *testing.T, path string) []standin.Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	var out []standin.Record
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		var r standin.Record
		require.NoError(t, json.Unmarshal([]byte(l), &r))
		if r.Event == "start" {
			out = append(out, r)
		}
	}
	return out
}

// keptBuildName is the copy of the ctrld build that last verified, which
// ctrld-install keeps in its home: ctrld's own bytes, copied, never
// written from anything ctrld-install read or printed, so whatever the
// stand-in's binary happens to hold is no leak.
const (
	keptBuildName = ".ctrld-install.kept-ctrld"
	txName        = ".ctrld-install.tx.json"
)

// assertNotAnywhere checks that secret is in no byte ctrld-install wrote:
// stdout, stderr, the log and every file in the home directory.
func (w *world) assertNotAnywhere(r result, secret string) {
	w.t.Helper()
	surfaces := map[string]string{"stdout": r.stdout, "stderr": r.stderr, "log": w.log()}
	entries, _ := os.ReadDir(w.home)
	for _, e := range entries {
		if e.Name() == keptBuildName {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(w.home, e.Name()))
		surfaces["home/"+e.Name()] = string(b)
	}
	for name, s := range surfaces {
		assert.NotContains(w.t, s, secret, "%s leaks a secret", name)
	}
}

// assertEndsWith checks that the identifier line of c for verb is the last
// line of stdout and of the log, and that its next step comes just before
// it on stdout.
func (w *world) assertEndsWith(r result, verb string, c codes.Code) {
	w.t.Helper()
	want := "ctrld-install: " + codes.FailureLine(verb, c)
	assert.Equal(w.t, c.Exit, r.exit, "exit status; stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	require.GreaterOrEqual(w.t, len(lines), 2, r.stdout)
	assert.Equal(w.t, want, lines[len(lines)-1], "the identifier line is the last line on stdout")
	step := c.NextStep
	if verb == codes.VerbUninstall && c.UninstallNextStep != "" {
		step = c.UninstallNextStep // uninstall's own advice
	}
	assert.Equal(w.t, "ctrld-install: next step: "+step, lines[len(lines)-2])
	log := logLines(w.t, w.log())
	require.NotEmpty(w.t, log, "the run wrote no log")
	assert.Equal(w.t, want, log[len(log)-1], "the identifier line is the last line of the log")
}

// uninstall runs ctrld-install uninstall with the world's paths.
func (w *world) uninstall(stdin string, args ...string) result {
	w.t.Helper()
	full := append([]string{"uninstall", "--ctrld", w.fake, "--home", w.home, "--service-file", w.serviceFile, "--log", w.logFile}, args...)
	return runInstaller(w.t, nil, stdin, full...)
}

// status runs ctrld-install status on the world's home.
func (w *world) status(format string) string {
	w.t.Helper()
	r := runInstaller(w.t, nil, "", "status", "--home", w.home, "--format", format)
	require.Equal(w.t, 0, r.exit, r.stdout+r.stderr)
	return r.stdout
}

// statusJSON is status --format json as a map.
func (w *world) statusJSON() map[string]any {
	w.t.Helper()
	var m map[string]any
	out := w.status("json")
	require.NoError(w.t, json.Unmarshal([]byte(out), &m), out)
	return m
}

// proc is ctrld-install running in the background.
type proc struct {
	cmd       *exec.Cmd
	out, errb bytes.Buffer
	started   time.Time
	done      chan struct{}
	res       result
}

// startInstaller starts the built binary with args and the clean
// environment plus env. The test's cleanup kills it if it still runs.
func startInstaller(t *testing.T, attr *syscall.SysProcAttr, env []string, args ...string) *proc {
	t.Helper()
	p := newProc(env, args...)
	p.cmd.SysProcAttr = attr
	return p.start(t)
}

// newProc prepares a run of the built binary for start; the caller may
// change its standard streams first.
func newProc(env []string, args ...string) *proc {
	p := &proc{cmd: exec.Command(installerBin, args...), done: make(chan struct{})}
	p.cmd.Env = append(cleanEnv(), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errb
	return p
}

// start starts a prepared run.
func (p *proc) start(t *testing.T) *proc {
	t.Helper()
	require.NoError(t, p.cmd.Start())
	p.started = time.Now()
	go func() {
		err := p.cmd.Wait()
		p.res.elapsed = time.Since(p.started)
		p.res.stdout, p.res.stderr = p.out.String(), p.errb.String()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			p.res.exit = ee.ExitCode()
		case err != nil:
			p.res.exit = -2
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// wait returns how the run ended, failing the test when it has not ended
// within d.
func (p *proc) wait(t *testing.T, d time.Duration) result {
	t.Helper()
	select {
	case <-p.done:
		return p.res
	case <-time.After(d):
		_ = p.cmd.Process.Kill()
		<-p.done
		require.FailNow(t, "ctrld-install did not end in time", "after %s; stdout:\n%s", d, p.res.stdout)
		return p.res
	}
}

// exited reports whether the run has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitForStart waits until the stand-in has recorded a start in path and
// returns that record.
func waitForStart(t *testing.T, path string) standin.Record {
	t.Helper()
	var rec standin.Record
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(path)
		if err != nil || !bytes.HasSuffix(b, []byte("\n")) {
			return false
		}
		line, _, _ := bytes.Cut(b, []byte("\n"))
		return json.Unmarshal(line, &rec) == nil
	}, 15*time.Second, 10*time.Millisecond, "ctrld start never ran")
	return rec
}

// groupGoneWithin waits for the process group pgid to have no member and
// returns how long that took; the test fails after d.
//
// A member that has died but is not yet reaped still answers kill(-pgid, 0).
// Orphans are reaped by PID 1, which in some containers does so only every
// second or so; such zombies run nothing and count as gone (on Linux, where
// /proc tells).
func groupGoneWithin(t *testing.T, pgid int, since time.Time, d time.Duration) time.Duration {
	t.Helper()
	require.Greater(t, pgid, 1)
	for {
		err := syscall.Kill(-pgid, 0)
		if errors.Is(err, syscall.ESRCH) || onlyZombiesIn(pgid) {
			return time.Since(since)
		}
		if time.Since(since) > d {
			// Leave nothing behind for the next test.
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			require.FailNow(t, "ctrld's process group outlived ctrld-install", "group %d still there %s after the signal (kill: %v)", pgid, d, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// onlyZombiesIn reports whether /proc lists members of group pgid and all
// of them have exited (state Z or X). Without /proc it reports false.
func onlyZombiesIn(pgid int) bool {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	members := 0
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 3 || f[2] != strconv.Itoa(pgid) {
			continue
		}
		members++
		if f[0] != "Z" && f[0] != "X" {
			return false
		}
	}
	return members > 0
}

// killGroupLater ends a stand-in's group at the end of the test, should a
// failing assertion leave it behind.
func killGroupLater(t *testing.T, pgid int) {
	t.Cleanup(func() {
		if pgid > 1 && syscall.Kill(-pgid, 0) == nil {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	})
}

// installerVersion is what `ctrld-install version` says of itself.
func installerVersion(t *testing.T) string {
	t.Helper()
	r := runInstaller(t, nil, "", "version")
	require.Equal(t, 0, r.exit)
	f := strings.Fields(r.stdout)
	require.GreaterOrEqual(t, len(f), 2, r.stdout)
	return f[1]
}

func TestVerifyMinVersion(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	require.NoError(t, os.WriteFile(w.serviceFile, []byte("[Unit]\n"), 0o644))
	w.script(standin.Script{Version: "v1.5.0", Status: standin.Action{NeedFile: w.serviceFile, Stdout: leak}})
	verify := func(min string) result {
		return runInstaller(t, nil, "", "verify", "--ctrld", w.fake, "--service-file", w.serviceFile, "--min-version", min)
	}

	r := verify("1.6.0")
	c := codes.Must(codes.CtrldVersionUnsupported)
	assert.Equal(t, 67, r.exit, r.stdout+r.stderr)
	assert.Equal(t, "ctrld-install: "+codes.FailureLine(codes.VerbVerify, c), finalLine(r.stdout))
	assert.Equal(t, "ctrld-install: error: ctrld 1.5.0 is older than the --min-version given\n", r.stderr)
	assert.NotContains(t, r.stdout+r.stderr, canaryToken)

	// A PIN pasted into --min-version is a version, and is not printed.
	r = verify(canaryPIN)
	assert.Equal(t, 67, r.exit, r.stdout+r.stderr)
	assert.NotContains(t, r.stdout+r.stderr, canaryPIN)

	r = verify("1.5.0")
	assert.Equal(t, 0, r.exit, r.stdout+r.stderr)
	assert.Equal(t, "ctrld-install: verify succeeded (exit 0)\n", r.stdout)
	assert.Empty(t, r.stderr)

	entries, err := os.ReadDir(w.home)
	require.NoError(t, err)
	assert.Empty(t, entries, "verify writes nothing")
}

func TestUninstall(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	// provisioned returns a world where ctrld-install installed ctrld and
	// ctrld uninstall does what uninstall says, and the file where the
	// stand-in records each ctrld uninstall.
	provisioned := func(t *testing.T, uninstall func(w *world) standin.Action) (*world, string) {
		w := newWorld(t)
		calls := filepath.Join(w.dir, "uninstall.jsonl")
		running := standin.Action{NeedFile: w.serviceFile}
		w.script(standin.Script{Start: w.success(), Status: running})
		w.assertSuccess(w.run("--token", canaryToken))
		a := uninstall(w)
		a.Record = calls
		w.script(standin.Script{Start: w.success(), Status: running, Uninstall: a})
		return w, calls
	}
	// removes is a ctrld uninstall that works, unless pin is set and not given.
	removes := func(pin string) func(w *world) standin.Action {
		return func(w *world) standin.Action {
			return standin.Action{RequirePIN: pin, RemoveFiles: []string{w.serviceFile},
				Stdout: append([]string{"NTC Service uninstalled"}, leak...)}
		}
	}

	t.Run("removes the service", func(t *testing.T) {
		t.Parallel()
		w, calls := provisioned(t, removes(""))
		r := w.uninstall("")
		assert.Equal(t, 0, r.exit, r.stdout+r.stderr)
		assert.Empty(t, r.stderr)
		assert.Regexp(t, `^ctrld-install: running ctrld uninstall \(ctrld 1\.5\.0, time left [0-9ms]+\)\n`, r.stdout)
		assert.Equal(t, "ctrld-install: uninstall succeeded (exit 0)", finalLine(r.stdout))
		log := logLines(t, w.log())
		assert.Equal(t, "ctrld-install: uninstall succeeded (exit 0)", log[len(log)-1])
		assert.NoFileExists(t, w.serviceFile)
		got := actions(t, calls)
		require.Len(t, got, 1)
		assert.Equal(t, []string{w.fake, "uninstall"}, got[0].Argv, "no PIN given, no --pin passed")
		rec := w.record()
		assert.Equal(t, record.ResultOK, rec.Result)
		assert.Equal(t, "uninstalled", rec.Action)
		assert.Equal(t, codes.OK, rec.Code)
		assert.Equal(t, 1, rec.Attempts)
		assert.Equal(t, "<result>UNINSTALLED</result>\n", w.status("jamf-ea"))
		w.assertNoCanary(r)
	})

	t.Run("PIN required and not given", func(t *testing.T) {
		t.Parallel()
		w, _ := provisioned(t, removes(lifecyclePIN))
		r := w.uninstall("")
		w.assertEndsWith(r, codes.VerbUninstall, codes.Must(codes.DeactivationPinRequired))
		assert.FileExists(t, w.serviceFile)
		rec := w.record()
		assert.Equal(t, codes.DeactivationPinRequired, rec.Code)
		assert.Empty(t, rec.Action, "uninstalled only when the removal held")
		assert.Equal(t, "uninstall", rec.Command)
		assert.Equal(t, "exit-status", rec.Source)
		assert.Equal(t, "<result>DEACTIVATION_PIN_REQUIRED</result>\n", w.status("jamf-ea"))
		w.assertNoCanary(r)
		w.assertNotAnywhere(r, lifecyclePIN)
	})

	t.Run("wrong PIN", func(t *testing.T) {
		t.Parallel()
		w, _ := provisioned(t, removes(lifecyclePIN))
		r := w.uninstall("12345678\n", "--pin-stdin")
		w.assertEndsWith(r, codes.VerbUninstall, codes.Must(codes.DeactivationPinRequired))
		assert.FileExists(t, w.serviceFile)
		w.assertNotAnywhere(r, "12345678")
		w.assertNotAnywhere(r, lifecyclePIN)
	})

	for _, src := range []string{"--pin-stdin", "--pin-file"} {
		t.Run("right PIN from "+src, func(t *testing.T) {
			t.Parallel()
			w, calls := provisioned(t, removes(lifecyclePIN))
			var r result
			if src == "--pin-stdin" {
				r = w.uninstall(lifecyclePIN+"\n", "--pin-stdin")
			} else {
				pf := filepath.Join(w.dir, "pin")
				require.NoError(t, os.WriteFile(pf, []byte(lifecyclePIN+"\n"), 0o600))
				r = w.uninstall("", "--pin-file", pf)
			}
			assert.Equal(t, 0, r.exit, r.stdout+r.stderr)
			assert.Equal(t, "ctrld-install: uninstall succeeded (exit 0)", finalLine(r.stdout))
			assert.NoFileExists(t, w.serviceFile)
			got := actions(t, calls)
			require.Len(t, got, 1)
			assert.Equal(t, []string{w.fake, "uninstall", "--pin", lifecyclePIN}, got[0].Argv, "the PIN goes to ctrld's argv")
			assert.Empty(t, got[0].Env, "and not to its environment")
			assert.Equal(t, "<result>UNINSTALLED</result>\n", w.status("jamf-ea"))
			w.assertNotAnywhere(r, lifecyclePIN)
			w.assertNoCanary(r)
		})
	}

	t.Run("ctrld exits 0 but the service stays", func(t *testing.T) {
		t.Parallel()
		// ctrld 1.5.0 prints an error and exits 0 when it cannot reach its service.
		w, _ := provisioned(t, func(*world) standin.Action {
			return standin.Action{Stdout: append([]string{"ERR could not uninstall service"}, leak...), Exit: 0}
		})
		r := w.uninstall("")
		c := codes.Must(codes.ServiceUninstallFailed)
		assert.Equal(t, 56, c.Exit)
		w.assertEndsWith(r, codes.VerbUninstall, c)
		assert.Equal(t, "ctrld-install: uninstall failed: stage=service code=SERVICE_UNINSTALL_FAILED (exit 56)", finalLine(r.stdout))
		assert.FileExists(t, w.serviceFile)
		rec := w.record()
		assert.Equal(t, codes.ServiceUninstallFailed, rec.Code)
		assert.Empty(t, rec.Action, "uninstalled only when the removal held")
		assert.Equal(t, "<result>SERVICE_UNINSTALL_FAILED</result>\n", w.status("jamf-ea"))
		w.assertNoCanary(r)
	})

	t.Run("nothing installed", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		calls := filepath.Join(w.dir, "uninstall.jsonl")
		w.script(standin.Script{Status: standin.Action{NeedFile: w.serviceFile}, Uninstall: standin.Action{Record: calls}})
		r := w.uninstall("")
		assert.Equal(t, 0, r.exit, r.stdout+r.stderr)
		assert.Equal(t, "ctrld-install: not installed, nothing to do (exit 0)\n", r.stdout)
		assert.Empty(t, r.stderr)
		assert.Empty(t, actions(t, calls), "ctrld uninstall must not run")
		rec := w.record()
		assert.Equal(t, "uninstalled", rec.Action)
		assert.Equal(t, codes.OK, rec.Code)
		assert.Equal(t, "<result>UNINSTALLED</result>\n", w.status("jamf-ea"))
	})
}

// The identifier line is the last line of a failed run, on stdout and in
// --log, whatever failed.
func TestIdentifierLineIsLastOnStdoutAndInTheLog(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	for _, tc := range []struct {
		name string
		verb string
		code string
		run  func(w *world) result
	}{
		{"identifier line from ctrld", codes.VerbProvisioning, codes.ListenerBindFailed, func(w *world) result {
			w.script(standin.Script{Start: standin.Action{Stdout: append(leak, "provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)", "more output after it"), Exit: 41}})
			return w.run("--token", canaryToken)
		}},
		{"released ctrld's output", codes.VerbProvisioning, codes.APIRejected, func(w *world) result {
			w.script(standin.Script{Start: standin.Action{Stdout: []string{
				"Nov 29 12:20:10.000 FTL failed to fetch resolver uid with provision token: " + canaryToken + ` error="invalid provision token"`,
			}, Exit: 1}})
			return w.run("--token", canaryToken)
		}},
		{"usage error", codes.VerbProvisioning, codes.InstallerUsage, func(w *world) result {
			w.script(standin.Script{Start: w.success()})
			return w.run("--token", canaryToken, "--bogus")
		}},
		{"ctrld missing", codes.VerbProvisioning, codes.CtrldNotFound, func(w *world) result {
			return runInstaller(w.t, nil, "", "--ctrld", filepath.Join(w.dir, "nowhere", "ctrld"), "--home", w.home,
				"--service-file", w.serviceFile, "--log", w.logFile, "--token", canaryToken)
		}},
		{"service not running", codes.VerbProvisioning, codes.ServiceNotRunning, func(w *world) result {
			w.script(standin.Script{Start: w.success(), Status: standin.Action{Exit: 3, Stdout: leak}})
			// A short budget: the service is given a quarter of it to come up.
			return w.run("--token", canaryToken, "--timeout", "8s")
		}},
		{"uninstall leaves the service", codes.VerbUninstall, codes.ServiceUninstallFailed, func(w *world) result {
			require.NoError(w.t, os.WriteFile(w.serviceFile, []byte("[Unit]\n"), 0o644))
			w.script(standin.Script{Status: standin.Action{NeedFile: w.serviceFile}, Uninstall: standin.Action{Stdout: leak}})
			return w.uninstall("")
		}},
		{"uninstall needs a PIN", codes.VerbUninstall, codes.DeactivationPinRequired, func(w *world) result {
			require.NoError(w.t, os.WriteFile(w.serviceFile, []byte("[Unit]\n"), 0o644))
			w.script(standin.Script{Status: standin.Action{NeedFile: w.serviceFile}, Uninstall: standin.Action{RequirePIN: lifecyclePIN}})
			return w.uninstall("")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			r := tc.run(w)
			c := codes.Must(tc.code)
			w.assertEndsWith(r, tc.verb, c)
			n := 0
			for _, l := range strings.Split(r.stdout, "\n") {
				if anyFailureLineRE.MatchString(l) {
					n++
				}
			}
			assert.Equal(t, 1, n, "one identifier line on stdout")
			w.assertNoCanary(r)
		})
	}
}

// A --log over 1 MiB is rotated at the start of a run, and every run
// starts its part of the log with a header of fixed words.
func TestLogRotationAndHeader(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	version := installerVersion(t)
	w := newWorld(t)
	w.script(standin.Script{Start: w.success(), Status: standin.Action{NeedFile: w.serviceFile}})

	old := bytes.Repeat([]byte("2026-01-01T00:00:00Z ctrld-install: an old line of an old run\n"), (1<<20)/60+10)
	require.Greater(t, len(old), 1<<20)
	require.NoError(t, os.WriteFile(w.logFile, old, 0o640))
	require.NoError(t, os.WriteFile(w.logFile+".1", []byte("the oldest log\n"), 0o640))

	runLogged := func(args ...string) (result, int) {
		p := startInstaller(t, nil, nil, args...)
		return p.wait(t, time.Minute), p.cmd.Process.Pid
	}
	header := func(line string, cmd, prof string, pid int) {
		t.Helper()
		m := headerRE.FindStringSubmatch(line)
		require.NotNil(t, m, "not a header line: %q", line)
		assert.Equal(t, version, m[1])
		assert.Equal(t, cmd, m[2])
		assert.Equal(t, prof, m[3])
		assert.Equal(t, strconv.Itoa(pid), m[4])
	}

	r, pid := runLogged("--ctrld", w.fake, "--home", w.home, "--service-file", w.serviceFile, "--log", w.logFile, "--token", canaryToken)
	w.assertSuccess(r)
	rotated, err := os.ReadFile(w.logFile + ".1")
	require.NoError(t, err)
	assert.Equal(t, old, rotated, "the big log became <log>.1, replacing the older one")
	log, err := os.ReadFile(w.logFile)
	require.NoError(t, err)
	assert.Less(t, len(log), 4096, "the new log holds this run only")
	lines := strings.Split(strings.TrimRight(string(log), "\n"), "\n")
	header(lines[0], "install", "default", pid)
	assert.True(t, strings.HasSuffix(lines[len(lines)-1], " ctrld-install: provisioning succeeded (exit 0)"))

	// Under 1 MiB: appended to, not rotated.
	r, pid = runLogged("--ctrld", w.fake, "--home", w.home, "--service-file", w.serviceFile, "--log", w.logFile,
		"--token", canaryToken, "--exit-profile", "jamf")
	assert.Equal(t, 0, r.exit, r.stdout+r.stderr)
	again, err := os.ReadFile(w.logFile)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(again, log), "appended, not truncated")
	rotated2, _ := os.ReadFile(w.logFile + ".1")
	assert.Equal(t, old, rotated2)
	second := strings.Split(strings.TrimRight(string(again[len(log):]), "\n"), "\n")
	header(second[0], "install", "jamf", pid)

	// Uninstall writes its own header; a usage error still writes one, and
	// never repeats the invalid profile it was given.
	r, pid = runLogged("uninstall", "--ctrld", w.fake, "--home", w.home, "--service-file", w.serviceFile, "--log", w.logFile,
		"--exit-profile", "filewave")
	before := len(again)
	again, err = os.ReadFile(w.logFile)
	require.NoError(t, err)
	third := strings.Split(strings.TrimRight(string(again[before:]), "\n"), "\n")
	header(third[0], "uninstall", "filewave", pid)

	r, pid = runLogged("--home", w.home, "--log", w.logFile, "--token", canaryToken, "--exit-profile", canaryLower)
	assert.Equal(t, 61, r.exit)
	before = len(again)
	again, err = os.ReadFile(w.logFile)
	require.NoError(t, err)
	fourth := strings.Split(strings.TrimRight(string(again[before:]), "\n"), "\n")
	header(fourth[0], "install", "invalid", pid)
	assert.True(t, strings.HasSuffix(fourth[len(fourth)-1], " ctrld-install: provisioning failed: stage=installer code=INSTALLER_USAGE (exit 61)"))
	w.assertNoCanary(r)
}

// A usage error is the command's own: its failure line carries the
// command's verb, and a simulation that stops on one leaves no temporary
// home behind.
func TestUsageErrorsOfEachCommand(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	for _, tc := range []struct {
		args []string
		last string
		log  bool // the command takes --log: the usage error must reach it
	}{
		{[]string{"uninstall", "--pin-file", "x", "--pin-stdin"}, "ctrld-install: uninstall failed: stage=installer code=INSTALLER_USAGE (exit 61)", true},
		{[]string{"uninstall", "--bogus-flag"}, "ctrld-install: uninstall failed: stage=installer code=INSTALLER_USAGE (exit 61)", true},
		{[]string{"uninstall", "--timeout", "bogus"}, "ctrld-install: uninstall failed: stage=installer code=INSTALLER_USAGE (exit 61)", true},
		{[]string{"uninstall", "stray"}, "ctrld-install: uninstall failed: stage=installer code=INSTALLER_USAGE (exit 61)", true},
		{[]string{"verify", "--timeout", "0s"}, "ctrld-install: verify failed: stage=installer code=INSTALLER_USAGE (exit 61)", false},
		{[]string{"--token", canaryToken, "--retries", "11"}, "ctrld-install: provisioning failed: stage=installer code=INSTALLER_USAGE (exit 61)", true},
		{[]string{"--token", canaryToken, "--bogus-flag"}, "ctrld-install: provisioning failed: stage=installer code=INSTALLER_USAGE (exit 61)", true},
	} {
		args := tc.args
		logFile := filepath.Join(t.TempDir(), "install.log")
		if tc.log {
			// --log before the bad flag: parsing stops at the bad one.
			n := 0
			if !strings.HasPrefix(args[0], "-") {
				n = 1
			}
			args = append(append(append([]string{}, args[:n]...), "--log", logFile), args[n:]...)
		}
		r := runInstaller(t, nil, "", append(args, "--home", t.TempDir())...)
		assert.Equal(t, 61, r.exit, "%v", tc.args)
		lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
		assert.Equal(t, tc.last, lines[len(lines)-1], "%v", tc.args)
		assert.NotContains(t, r.stdout+r.stderr, canaryToken)
		if tc.log {
			b, err := os.ReadFile(logFile)
			if assert.NoError(t, err, "%v: the usage error reaches --log", tc.args) {
				logged := logLines(t, string(b))
				assert.Equal(t, tc.last, logged[len(logged)-1], "%v", tc.args)
				assert.NotContains(t, string(b), canaryToken)
			}
		}
	}

	tmp := t.TempDir()
	r := runInstaller(t, []string{"TMPDIR=" + tmp}, "", "--simulate", "OK", "--token", canaryToken, "--resolver", canaryResolver)
	assert.Equal(t, 61, r.exit)
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	assert.Empty(t, left, "the simulation's temporary home is removed after a usage error")
}
