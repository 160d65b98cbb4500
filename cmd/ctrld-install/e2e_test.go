//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/runner"
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// The canaries stand for secrets. They are planted in every input
// ctrld-install reads and must appear in no byte it writes.
const (
	canaryToken    = "CANARYTOKEN0123456789abcdef"
	canaryResolver = "CANARYRESOLVER0123456"
	// canaryLower looks like a real lowercase token, the shape that a
	// "plain flag name" rule would let through.
	canaryLower = "k3x9pq2mzrlowercanary"
)

// world is one scenario's machine: a home directory, a service file path, a
// fake ctrld and the file where the fake records how it was run.
type world struct {
	t           *testing.T
	dir         string
	home        string
	serviceFile string
	resultFile  string
	logFile     string
	argvFile    string
	fake        string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	// A world runs install, uninstall or verify, which need root: as any
	// other user they end INSTALLER_NOT_ROOT, which TestNotRoot checks.
	if os.Geteuid() != 0 {
		t.Skip("install, verify and uninstall need root")
	}
	dir := t.TempDir()
	w := &world{
		t:           t,
		dir:         dir,
		home:        filepath.Join(dir, "home"),
		serviceFile: filepath.Join(dir, "service", "ctrld.service"),
		logFile:     filepath.Join(dir, "install.log"),
		argvFile:    filepath.Join(dir, "argv.jsonl"),
	}
	w.resultFile = filepath.Join(w.home, "provision_result.json")
	require.NoError(t, os.MkdirAll(w.home, 0o750))
	require.NoError(t, os.MkdirAll(filepath.Dir(w.serviceFile), 0o755))
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	fake, err := standin.Link(bin, standinMaster, standin.Script{})
	require.NoError(t, err)
	w.fake = fake
	return w
}

// script sets the fake's behaviour. Status reports running when the service
// file exists, as a real ctrld would, unless the test says otherwise.
func (w *world) script(s standin.Script) {
	if s.Version == "" {
		s.Version = "v1.5.0"
	}
	if s.Start.Record == "" {
		s.Start.Record = w.argvFile
	}
	for i := range s.Starts {
		if s.Starts[i].Record == "" {
			s.Starts[i].Record = w.argvFile
		}
	}
	require.NoError(w.t, standin.SetScript(w.fake, s))
}

// success is what a working ctrld start does.
func (w *world) success() standin.Action {
	return standin.Action{
		WriteFiles: map[string]string{w.serviceFile: "[Unit]\n"},
		Stdout:     []string{"Mar  4 20:56:15.000 NTC Starting service", "Mar  4 20:56:17.730 NTC Service started"},
	}
}

// resultFileJSON is a contract result file whose message carries the token.
func resultFileJSON(c codes.Code) string {
	return fmt.Sprintf(`{"version":1,"timestamp":"2026-08-18T12:00:00Z","stage":%q,"code":%q,"exit_code":%d,`+
		`"message":"failed with token %s and resolver %s","detail":{"token":%q}}`,
		c.Stage, c.Name, c.Exit, canaryToken, canaryResolver, canaryToken)
}

type result struct {
	stdout, stderr string
	exit           int
	elapsed        time.Duration
}

// run executes ctrld-install with the world's paths and args.
func (w *world) run(args ...string) result {
	w.t.Helper()
	return w.runWith(nil, "", args...)
}

func (w *world) runWith(env []string, stdin string, args ...string) result {
	w.t.Helper()
	full := append([]string{
		"--ctrld", w.fake, "--home", w.home, "--service-file", w.serviceFile, "--log", w.logFile,
	}, args...)
	if len(args) > 0 && (args[0] == "status" || args[0] == "verify") {
		full = args
	}
	return runInstaller(w.t, env, stdin, full...)
}

func runInstaller(t *testing.T, env []string, stdin string, args ...string) result {
	t.Helper()
	return runBinary(t, installerBin, env, stdin, args...)
}

func runInstaller2(t *testing.T, bin string, env []string, args ...string) result {
	t.Helper()
	return runBinary(t, bin, env, "", args...)
}

func runBinary(t *testing.T, bin string, env []string, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(cleanEnv(), env...)
	t0 := time.Now()
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(t0)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return r
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CTRLD_") {
			env = append(env, kv)
		}
	}
	return env
}

var failureLineRE = regexp.MustCompile(`(?m)^ctrld-install: provisioning failed: stage=([a-z]*) code=([A-Z_]*) \(exit ([0-9]*)\)$`)

// assertFailure checks every text surface for code c: exit status, the
// failure line and next step as the last stdout lines, the log, the record.
func (w *world) assertFailure(r result, name string, source string) {
	w.t.Helper()
	c := codes.Must(name)
	assert.Equal(w.t, c.Exit, r.exit, "exit status; stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	require.GreaterOrEqual(w.t, len(lines), 2, r.stdout)
	assert.Equal(w.t, "ctrld-install: next step: "+c.NextStep, lines[len(lines)-2])
	assert.Equal(w.t, fmt.Sprintf("ctrld-install: provisioning failed: stage=%s code=%s (exit %d)", c.Stage, c.Name, c.Exit), lines[len(lines)-1],
		"the identifier line is the last line")
	assert.Len(w.t, failureLineRE.FindAllString(r.stdout, -1), 1)
	rec := w.record()
	assert.Equal(w.t, record.ResultFailed, rec.Result)
	assert.Equal(w.t, c.Name, rec.Code)
	assert.Equal(w.t, string(c.Stage), rec.Stage)
	assert.Equal(w.t, c.Exit, rec.ExitCode)
	assert.Equal(w.t, string(c.Class), rec.Class)
	if source != "" {
		assert.Equal(w.t, source, rec.Source)
	}
	log := w.log()
	if log != "" {
		logLines := strings.Split(strings.TrimRight(log, "\n"), "\n")
		assert.True(w.t, strings.HasSuffix(logLines[len(logLines)-1], fmt.Sprintf("ctrld-install: provisioning failed: stage=%s code=%s (exit %d)", c.Stage, c.Name, c.Exit)),
			"the identifier line is the last line of the log")
	}
	w.assertNoCanary(r)
}

func (w *world) assertSuccess(r result) {
	w.t.Helper()
	assert.Equal(w.t, 0, r.exit, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	assert.True(w.t, strings.HasSuffix(r.stdout, "ctrld-install: provisioning succeeded (exit 0)\n"), r.stdout)
	assert.Empty(w.t, r.stderr)
	rec := w.record()
	assert.Equal(w.t, record.ResultOK, rec.Result)
	assert.Equal(w.t, codes.OK, rec.Code)
	assert.Equal(w.t, "provisioned", rec.Action)
	w.assertNoCanary(r)
}

// endPause ends the pause of a request refused for good, as its 15
// minutes would.
func (w *world) endPause() {
	w.t.Helper()
	require.NoError(w.t, os.Remove(filepath.Join(w.home, ".ctrld-install.pause.json")))
}

func (w *world) record() record.Record {
	w.t.Helper()
	r, err := record.Read(filepath.Join(w.home, record.FileName))
	require.NoError(w.t, err)
	return r
}

func (w *world) log() string {
	b, _ := os.ReadFile(w.logFile)
	return string(b)
}

// assertNoCanary checks every byte ctrld-install wrote: stdout, stderr,
// the log file, and every file in the home directory except those the
// fake ctrld itself wrote there.
func (w *world) assertNoCanary(r result) {
	w.t.Helper()
	surfaces := map[string]string{"stdout": r.stdout, "stderr": r.stderr, "log": w.log()}
	entries, _ := os.ReadDir(w.home)
	for _, e := range entries {
		if e.Name() == filepath.Base(w.resultFile) || e.Name() == keptBuildName {
			continue
		}
		if e.Name() == txName {
			// What ran before a change, the resolver ID among it, as
			// ctrld's own service definition holds it: root's alone.
			if fi, err := os.Stat(filepath.Join(w.home, e.Name())); err == nil {
				assert.Equal(w.t, os.FileMode(0o600), fi.Mode().Perm(), "%s is private", txName)
			}
			continue
		}
		b, _ := os.ReadFile(filepath.Join(w.home, e.Name()))
		surfaces["home/"+e.Name()] = string(b)
	}
	for name, s := range surfaces {
		for _, canary := range []string{canaryToken, canaryResolver, canaryToken[:12], canaryLower, "SECRETFROMOUTPUT"} {
			assert.NotContains(w.t, s, canary, "%s leaks a secret", name)
		}
	}
}

// argv returns how ctrld start was run, one record per start.
func (w *world) argv() []standin.Record {
	w.t.Helper()
	var out []standin.Record
	for _, r := range w.events() {
		if r.Event == "start" {
			out = append(out, r)
		}
	}
	return out
}

// events returns every record the fake wrote, starts and ends.
func (w *world) events() []standin.Record {
	w.t.Helper()
	b, err := os.ReadFile(w.argvFile)
	require.NoError(w.t, err)
	var out []standin.Record
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r standin.Record
		require.NoError(w.t, json.Unmarshal([]byte(l), &r))
		out = append(out, r)
	}
	return out
}

// leak is output a released ctrld prints: its fatal line carries the token.
var leak = []string{
	"\x1b[90mNov 29 12:24:55.000\x1b[0m \x1b[31mFTL\x1b[0m \x1b[1mfailed to fetch resolver uid with provision token: " + canaryToken + "\x1b[0m error=SECRETFROMOUTPUT",
	"fetching Controld D configuration from API: " + canaryResolver,
}

func TestInstallSuccess(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.script(standin.Script{Start: w.success()})
	r := w.run("--token", canaryToken)
	w.assertSuccess(r)
	assert.Regexp(t, `^ctrld-install: plan: nothing is installed\nctrld-install: running ctrld start \(ctrld 1\.5\.0, attempt 1 of 3, time left [0-9ms]+\)\n`, r.stdout)
	rec := w.record()
	assert.Equal(t, "post-conditions", rec.Source)
	require.NotNil(t, rec.CtrldVersion)
	assert.Equal(t, "1.5.0", *rec.CtrldVersion)
	assert.Equal(t, "absent", rec.ResultFile)
	assert.Equal(t, 1, rec.Attempts)

	calls := w.argv()
	require.Len(t, calls, 1)
	assert.Equal(t, []string{w.fake, "start", "--cd-org", canaryToken}, calls[0].Argv)
	assert.Equal(t, w.home, calls[0].Dir, "ctrld runs in its home directory")
	assert.Equal(t, "1", calls[0].NoColor)
	assert.NotEqual(t, calls[0].Pid, calls[0].Pgid, "a watcher leads ctrld's group, apart from ctrld-install's")
	assert.Empty(t, calls[0].Env, "no CTRLD_* variable, and so no token, in ctrld's environment")
}

func TestLogLinesAreTimestamped(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	w := newWorld(t)
	w.script(standin.Script{Start: w.success()})
	r := w.run("--token", canaryToken)
	require.Equal(t, 0, r.exit)
	log := strings.Split(strings.TrimRight(w.log(), "\n"), "\n")
	out := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	require.Len(t, log, len(out)+1, "the log has one header line more")
	assert.Regexp(t, `^[0-9TZ:-]+ ctrld-install: run started: ctrld-install [0-9a-z.-]+, command install, exit profile default, pid [0-9]+$`, log[0])
	log = log[1:]
	for i, l := range log {
		ts, rest, ok := strings.Cut(l, " ")
		require.True(t, ok)
		parsed, err := time.Parse(time.RFC3339, ts)
		require.NoError(t, err, l)
		assert.Equal(t, time.UTC, parsed.Location())
		assert.True(t, strings.HasSuffix(ts, "Z"), ts)
		assert.Equal(t, out[i], rest)
	}
	// Appends, never truncates.
	w.run("--token", canaryToken, "--force")
	assert.Greater(t, len(strings.Split(strings.TrimRight(w.log(), "\n"), "\n")), len(log))
}

func TestTokenSources(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	for _, tc := range []struct {
		name  string
		args  []string
		env   []string
		stdin string
		want  []string
	}{
		{"flag", []string{"--token", canaryToken}, nil, "", []string{"start", "--cd-org", canaryToken}},
		{"stdin", []string{"--token-stdin"}, nil, canaryToken + "\r\nsecond line\n", []string{"start", "--cd-org", canaryToken}},
		{"env", nil, []string{"CTRLD_PROVISION_TOKEN=" + canaryToken}, "", []string{"start", "--cd-org", canaryToken}},
		{"resolver", []string{"--resolver", canaryResolver}, nil, "", []string{"start", "--cd", canaryResolver}},
		{"resolver wins over the environment", []string{"--resolver", canaryResolver}, []string{"CTRLD_PROVISION_TOKEN=" + canaryToken}, "", []string{"start", "--cd", canaryResolver}},
		{"extra flags after --", []string{"--token", canaryToken, "--", "--custom-hostname", "host-1", "--intercept-mode=dns"}, nil, "",
			[]string{"start", "--cd-org", canaryToken, "--custom-hostname", "host-1", "--intercept-mode=dns"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.script(standin.Script{Start: w.success()})
			r := w.runWith(tc.env, tc.stdin, tc.args...)
			w.assertSuccess(r)
			calls := w.argv()
			require.Len(t, calls, 1)
			assert.Equal(t, tc.want, calls[0].Argv[1:])
			assert.Empty(t, calls[0].Env)
		})
	}
	t.Run("file", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		w.script(standin.Script{Start: w.success()})
		tf := filepath.Join(w.dir, "token")
		require.NoError(t, os.WriteFile(tf, []byte(canaryToken+"\n"), 0o600))
		w.assertSuccess(w.run("--token-file", tf))
		assert.Equal(t, []string{"start", "--cd-org", canaryToken}, w.argv()[0].Argv[1:])
	})
}

func TestUsageErrors(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	tf := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tf, []byte("has space "+canaryToken+"\n"), 0o600))
	for _, tc := range []struct {
		name    string
		args    []string
		env     []string
		message string
	}{
		{"unknown flag", []string{"--token", canaryToken, "--bogus"}, nil, "an unknown flag was given"},
		{"a flag of another command", []string{"--token", canaryToken, "--format", "json"}, nil, "unknown flag --format"},
		{"near miss", []string{"--tokne", canaryToken}, nil, "an unknown flag was given; did you mean --token?"},
		{"token glued to its flag", []string{"--token" + canaryLower}, nil, "an unknown flag was given"},
		{"lowercase token as a flag", []string{"--token", canaryToken, "--" + canaryLower}, nil, "an unknown flag was given"},
		{"lowercase token as a shorthand", []string{"--token", canaryToken, "-" + canaryLower}, nil, "an unknown flag was given"},
		{"unknown flag glued to a token", []string{"--" + canaryToken + "=x"}, nil, "an unknown flag was given"},
		{"unknown shorthand with a pasted token", []string{"-" + canaryToken}, nil, "an unknown flag was given"},
		{"missing token", nil, nil, "no token given"},
		{"two token sources", []string{"--token", canaryToken, "--resolver", canaryResolver}, nil, "give only one of"},
		{"token and token file", []string{"--token", canaryToken, "--token-file", tf}, nil, "give only one of"},
		{"--cd-org after --", []string{"--token", canaryToken, "--", "--cd-org", canaryToken}, nil, "--cd and --cd-org cannot be passed after --"},
		{"--cd= after --", []string{"--token", canaryToken, "--", "--cd=" + canaryResolver}, nil, "--cd and --cd-org cannot be passed after --"},
		{"bad duration", []string{"--token", canaryToken, "--timeout", canaryToken}, nil, "--timeout needs a duration such as 5m or 90s"},
		{"zero duration", []string{"--token", canaryToken, "--timeout", "0s"}, nil, "--timeout must be at least 1s"},
		{"token with white space", []string{"--token", "abc " + canaryToken}, nil, "the token contains white space or control characters"},
		{"token file with white space", []string{"--token-file", tf}, nil, "the token contains white space or control characters"},
		{"token with control character", []string{"--token", canaryToken + "\x1b[2J"}, nil, "the token contains white space or control characters"},
		{"env token with white space", nil, []string{"CTRLD_PROVISION_TOKEN=" + canaryToken + " x"}, "the token contains white space or control characters"},
		{"missing token file", []string{"--token-file", filepath.Join(t.TempDir(), canaryToken)}, nil, "the token file cannot be read"},
		{"positional argument", []string{canaryToken}, nil, "unexpected argument before --"},
		{"bad min version", []string{"--token", canaryToken, "--min-version", canaryToken}, nil, "--min-version needs a version"},
		{"bad exit profile", []string{"--token", canaryToken, "--exit-profile", canaryToken}, nil, "--exit-profile must be one of"},
		{"bad simulate code", []string{"--simulate", canaryToken}, nil, "--simulate needs a registered code"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.script(standin.Script{Start: w.success()})
			r := w.runWith(tc.env, "", tc.args...)
			assert.True(t, strings.HasPrefix(r.stderr, "ctrld-install: error: "+tc.message), r.stderr)
			assert.Regexp(t, `^ctrld-install: error: [a-z-].*[^.]\n$`, r.stderr, "one lowercase sentence without a period")
			if len(tc.args) > 0 && tc.args[0] == "--simulate" {
				assert.Equal(t, 61, r.exit)
				_, err := os.Stat(filepath.Join(w.home, record.FileName))
				assert.True(t, os.IsNotExist(err), "a simulation records nothing, not even its usage error")
				return
			}
			w.assertFailure(r, codes.InstallerUsage, "installer")
			_, err := os.Stat(w.argvFile)
			assert.True(t, os.IsNotExist(err), "ctrld must not run after a usage error")
		})
	}
}

// Which evidence decides when there is more than one, and what does not
// count as evidence. Each source alone is in testdata/script/failure_*.
func TestResultFileDecides(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	bind := codes.Must(codes.ListenerBindFailed)
	for _, tc := range []struct {
		name   string
		start  func(w *world) standin.Action
		code   string
		source string
		rf     string
	}{
		{"result file beats exit 0", func(w *world) standin.Action {
			a := w.success()
			a.WriteFiles[w.resultFile] = resultFileJSON(codes.Must(codes.APIUnreachable))
			return a
		}, codes.APIUnreachable, "result-file", "used"},
		{"result file beats a disagreeing identifier line", func(w *world) standin.Action {
			return standin.Action{
				WriteFiles: map[string]string{w.resultFile: resultFileJSON(bind)},
				Stdout:     []string{"provisioning failed: stage=bootstrap code=API_REJECTED (exit 32)"},
				Exit:       32,
			}
		}, codes.ListenerBindFailed, "result-file", "used"},
		{"identifier line on stderr with ANSI and CRLF", func(w *world) standin.Action {
			return standin.Action{Stderr: []string{"\x1b[31mprovisioning failed: stage=service code=SERVICE_START_FAILED (exit 52)\x1b[0m\r"}, Exit: 52}
		}, codes.ServiceStartFailed, "identifier-line", "absent"},
		{"identifier line with the token appended is not one", func(w *world) standin.Action {
			return standin.Action{Stdout: []string{"provisioning failed: stage=bootstrap code=API_REJECTED (exit 32) " + canaryToken}, Exit: 1}
		}, codes.CtrldFailedUnclassified, "exit-status", "absent"},
		{"result file with an unknown code carrying the token", func(w *world) standin.Action {
			return standin.Action{WriteFiles: map[string]string{w.resultFile: strings.Replace(resultFileJSON(bind), bind.Name, canaryToken, 1)}, Exit: 1}
		}, codes.CtrldFailedUnclassified, "exit-status", "invalid"},
		{"exit 1 with nothing understood", func(w *world) standin.Action {
			return standin.Action{Stdout: []string{"SECRETFROMOUTPUT"}, Exit: 1}
		}, codes.CtrldFailedUnclassified, "exit-status", "absent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.script(standin.Script{Start: tc.start(w), Status: standin.Action{Exit: 0}})
			r := w.run("--token", canaryToken, "--retries", "0")
			w.assertFailure(r, tc.code, tc.source)
			assert.Equal(t, tc.rf, w.record().ResultFile)
		})
	}
}

func TestStaleResultFileIsIgnored(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	require.NoError(t, os.WriteFile(w.resultFile, []byte(resultFileJSON(codes.Must(codes.ListenerBindFailed))), 0o600))
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(w.resultFile, old, old))
	w.script(standin.Script{Start: w.success()})
	r := w.run("--token", canaryToken)
	w.assertSuccess(r)
	assert.Equal(t, "stale", w.record().ResultFile)
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.script(standin.Script{Start: standin.Action{Stdout: leak, Hang: true}})
	r := w.run("--token", canaryToken, "--timeout", "3s")
	w.assertFailure(r, codes.CtrldTimeout, "exit-status")
	assertWithinBudget(t, r.elapsed, 3*time.Second)
	w.assertGroupGone()
}

// The one test that waits out the 3 s grace before SIGKILL: the runner's
// own tests cover the escalation with a short grace.
func TestTimeoutWithAChildIgnoringTerm(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	w := newWorld(t)
	w.script(standin.Script{Start: standin.Action{Hang: true, IgnoreTerm: true}})
	r := w.run("--token", canaryToken, "--timeout", "3s")
	w.assertFailure(r, codes.CtrldTimeout, "exit-status")
	assert.Greater(t, r.elapsed, 3*time.Second+3*time.Second-500*time.Millisecond, "budget + grace: SIGTERM was ignored")
	assertWithinBudget(t, r.elapsed, 3*time.Second)
	w.assertGroupGone()
}

// A fresh result file beats a timeout: ctrld said what failed before it hung.
func TestResultFileBeatsTimeout(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	w := newWorld(t)
	w.script(standin.Script{Start: standin.Action{
		WriteFiles: map[string]string{w.resultFile: resultFileJSON(codes.Must(codes.APIDeviceInvalid))},
		Hang:       true,
	}})
	w.assertFailure(w.run("--token", canaryToken, "--timeout", "3s"), codes.APIDeviceInvalid, "result-file")
}

// assertWithinBudget checks that a run ended within its budget and what
// ctrld-install may take past it: the grace between SIGTERM and SIGKILL, a
// second to read what ctrld left, a second for the final lines to reach
// stdout, and slack for a loaded machine. Never tighter: timing is not
// what these tests prove.
func assertWithinBudget(t *testing.T, elapsed, budget time.Duration) {
	t.Helper()
	assert.Less(t, elapsed, budget+runner.DefaultGrace+2*time.Second+5*time.Second, "the budget, the grace and the documented seconds after it")
}

func (w *world) assertGroupGone() {
	w.t.Helper()
	calls := w.argv()
	require.NotEmpty(w.t, calls)
	pgid := calls[len(calls)-1].Pgid
	assert.Eventually(w.t, func() bool { return syscall.Kill(-pgid, 0) != nil }, 3*time.Second, 50*time.Millisecond,
		"ctrld's process group must be gone")
}

// A grandchild that holds ctrld's stdout after ctrld start exited by itself
// holds the run no longer than the grace period. It is left alive, its pipe
// closed: what ctrld start leaves in its group may be the daemon.
func TestGrandchildHoldingStdoutDoesNotHoldTheRun(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	w := newWorld(t)
	a := w.success()
	a.Grandchild = true
	w.script(standin.Script{Start: a})
	r := w.run("--token", canaryToken, "--timeout", "60s")
	pgid := w.argv()[0].Pgid
	killGroupLater(t, pgid)
	w.assertSuccess(r)
	assertWithinBudget(t, r.elapsed, 60*time.Second)
	alive := syscall.Kill(-pgid, 0) == nil && !onlyZombiesIn(pgid)
	assert.True(t, alive, "the grandchild of a ctrld start that exited by itself is left alive")
}

func TestCtrldNotFound(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	r := runInstaller(t, nil, "", "--ctrld", filepath.Join(w.dir, "missing", "ctrld"), "--home", w.home, "--token", canaryToken, "--log", w.logFile)
	w.assertFailure(r, codes.CtrldNotFound, "installer")

	w = newWorld(t)
	// Not a chmod of the stand-in: it is a hard link, and its mode is every
	// other test's too. A ctrld without the execute bit in its place.
	require.NoError(t, os.Remove(w.fake))
	require.NoError(t, os.WriteFile(w.fake, []byte("#!/bin/sh\nexit 0\n"), 0o644))
	w.assertFailure(w.run("--token", canaryToken), codes.CtrldNotFound, "installer")

	w = newWorld(t)
	w.assertFailure(runInstaller(t, nil, "", "--ctrld", w.dir, "--home", w.home, "--token", canaryToken, "--log", w.logFile),
		codes.CtrldNotFound, "installer")
}

func TestNotRoot(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		r := runInstaller(t, nil, "", "--token", canaryToken, "--home", t.TempDir())
		assert.Equal(t, 62, r.exit)
		return
	}
	// Run the real binary as nobody: a copy it can execute, a home it cannot use.
	dir, err := os.MkdirTemp("", "ctrld-install-notroot-*")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	bin := filepath.Join(dir, "ctrld-install")
	// A link, not a copy: a file open for writing while a parallel test
	// forks cannot be executed (golang/go#22315).
	require.NoError(t, os.Link(installerBin, bin))
	cmd := exec.Command(bin, "--token", canaryToken, "--home", filepath.Join(dir, "home"), "--ctrld", "/nonexistent/ctrld")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 62, ee.ExitCode())
	assert.True(t, strings.HasSuffix(out.String(), "ctrld-install: provisioning failed: stage=installer code=INSTALLER_NOT_ROOT (exit 62)\n"), "the identifier line is the last line: %s", out.String())
	assert.NotContains(t, out.String()+errb.String(), canaryToken)
}

func TestMinVersion(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.script(standin.Script{Version: "v1.3.11-1a2b3c4", Start: w.success()})
	r := w.run("--token", canaryToken, "--min-version", "1.4.0")
	w.assertFailure(r, codes.CtrldVersionUnsupported, "installer")
	_, err := os.Stat(w.argvFile)
	assert.True(t, os.IsNotExist(err), "ctrld start must not run")
	require.NotNil(t, w.record().CtrldVersion)
	assert.Equal(t, "1.3.11", *w.record().CtrldVersion)

	w.script(standin.Script{Version: "v1.3.11-1a2b3c4", Start: w.success()})
	w.assertSuccess(w.run("--token", canaryToken, "--min-version", "1.3.11"))
}

func TestRecordCannotBeWritten(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	w := newWorld(t)
	// A directory where the record goes: every rename onto it fails.
	require.NoError(t, os.MkdirAll(filepath.Join(w.home, "ctrld-install-result.json", "x"), 0o755))
	w.script(standin.Script{Start: standin.Action{Stdout: []string{"provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)"}, Exit: 41}})
	r := w.run("--token", canaryToken)
	assert.Equal(t, 41, r.exit)
	assert.True(t, strings.HasSuffix(r.stdout, "ctrld-install: provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)\n"), r.stdout)
	assert.Contains(t, r.stderr, "ctrld-install: error: the outcome record cannot be written in the home directory (--home)\n")
	require.Len(t, w.argv(), 1)
}

// A home that is not a directory (--home /dev/null) is refused, as a
// symbolic link is: without it there would be no lock and no record.
func TestHomeThatIsNotADirectory(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	home := filepath.Join(w.dir, "home-is-a-file")
	require.NoError(t, os.WriteFile(home, []byte("x"), 0o600))
	w.home = home
	w.resultFile = filepath.Join(home, "provision_result.json")
	w.script(standin.Script{Start: w.success()})
	r := w.run("--token", canaryToken)
	assert.Equal(t, codes.Must(codes.InstallerHomeUnsafe).Exit, r.exit)
	assert.True(t, strings.HasSuffix(r.stdout, "ctrld-install: provisioning failed: stage=installer code=INSTALLER_HOME_UNSAFE (exit 69)\n"), r.stdout)
	assert.Contains(t, r.stderr, "ctrld-install: error: the home directory (--home) is not a directory; refusing to use it\n")
	_, err := os.Stat(w.argvFile)
	assert.True(t, os.IsNotExist(err), "ctrld must not run")
}

// A run killed outright leaves its journal entry; status reports it as
// interrupted once its process is gone.
func TestStatusOfAKilledRun(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	w := newWorld(t)
	w.script(standin.Script{Start: standin.Action{Hang: true}})
	cmd := exec.Command(installerBin, "--ctrld", w.fake, "--home", w.home, "--service-file", w.serviceFile, "--token", canaryToken, "--timeout", "1m")
	cmd.Env = cleanEnv()
	require.NoError(t, cmd.Start())
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(w.argvFile)
		return err == nil && len(b) > 0
	}, 10*time.Second, 20*time.Millisecond)
	r := w.run("status", "--home", w.home, "--format", "jamf-ea")
	assert.Equal(t, "<result>RUNNING</result>\n", r.stdout)
	r = w.run("status", "--home", w.home)
	assert.Regexp(t, `a run is in progress: phase ctrld-running, pid [0-9]+`, r.stdout)

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	r = w.run("status", "--home", w.home, "--format", "jamf-ea")
	assert.Equal(t, "<result>INSTALLER_INTERRUPTED</result>\n", r.stdout)
	r = w.run("status", "--home", w.home)
	assert.Contains(t, r.stdout, "interrupted during phase ctrld-running")
	assert.True(t, strings.HasSuffix(r.stdout, "ctrld-install: provisioning failed: stage=installer code=INSTALLER_INTERRUPTED (exit 68)\n"), "the identifier line is the last line: %s", r.stdout)
	r = w.run("status", "--home", w.home, "--format", "json")
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &m))
	assert.Equal(t, "INSTALLER_INTERRUPTED", m["code"])
	assert.Equal(t, "ctrld-running", m["phase"])
	w.assertNoCanary(r)
	// The fake was orphaned by the kill; end it.
	pgid := w.argv()[0].Pgid
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

func TestSignalInterruptsTheRun(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.script(standin.Script{Start: standin.Action{Hang: true, Stdout: leak}})
			cmd := exec.Command(installerBin, "--ctrld", w.fake, "--home", w.home, "--service-file", w.serviceFile,
				"--token", canaryToken, "--timeout", "1m", "--log", w.logFile)
			cmd.Env = cleanEnv()
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			require.NoError(t, cmd.Start())
			require.Eventually(t, func() bool {
				b, err := os.ReadFile(w.argvFile)
				return err == nil && len(b) > 0
			}, 10*time.Second, 20*time.Millisecond)
			require.NoError(t, cmd.Process.Signal(sig))
			err := cmd.Wait()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			w.assertFailure(result{stdout: out.String(), stderr: errb.String(), exit: ee.ExitCode()}, codes.InstallerInterrupted, "installer")
			w.assertGroupGone()
		})
	}
}

func TestNoRetryWhenTheBudgetCannotHoldAnotherAttempt(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	unreachable := codes.Must(codes.APIUnreachable)
	w.script(standin.Script{Start: standin.Action{WriteFiles: map[string]string{w.resultFile: resultFileJSON(unreachable)}, Exit: 31}})
	r := w.run("--token", canaryToken, "--timeout", "20s")
	w.assertFailure(r, codes.APIUnreachable, "result-file")
	assert.Equal(t, 1, w.record().Attempts)
}

func TestFatalIsNeverRetried(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.script(standin.Script{Start: standin.Action{Stdout: []string{"provisioning failed: stage=bootstrap code=API_REJECTED (exit 32)"}, Exit: 32}})
	r := w.run("--token", canaryToken, "--retries", "5")
	w.assertFailure(r, codes.APIRejected, "identifier-line")
	assert.Len(t, w.argv(), 1)
	assert.NotContains(t, r.stdout, "retrying")
}

// Released ctrld writes no result file and prints no identifier line: its
// output must give the same codes end to end, and the token and resolver
// ID it prints must go nowhere. internal/parse classifies every file of
// testdata/legacy; here run the ones whose outcome, source or shape of
// output (CRLF, colour, chunks, the exit marker) no capture replayed by
// TestCapturesReplayedThroughTheBinary shows.
func TestReleasedCtrldOutput(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	for _, tc := range []struct {
		file   string
		exit   int
		code   string
		source string
	}{
		{"v1.5.0-windows-token-rejected-crlf.log", 1, codes.APIRejected, "legacy-output"},
		{"v1.5.0-daemon-bootstrap-replay.log", 1, codes.BootstrapFailed, "legacy-output"},
		{"v1.5.0-daemon-device-deleted-replay.log", 1, codes.APIDeviceInvalid, "legacy-output"},
		{"v1.5.0-chunked-replay-network-down.log", 1, codes.APIUnreachable, "legacy-output"},
		{"v1.x-listener-bind-exit-marker.log", 1, codes.ListenerBindFailed, "legacy-output"},
		{"v1.5.0-deactivation-pin.log", 126, codes.DeactivationPinRequired, "exit-status"},
		{"v1.5.0-task-start-exit0.log", 0, codes.ServiceStartFailed, "legacy-output"},
		{"v1.5.0-panic-missing-listener.log", 2, codes.CtrldFailedUnclassified, "exit-status"},
		{"v1.5.0-invalid-config-replay.log", 1, codes.ConfigInvalid, "legacy-output"},
		{"v1.5.0-success-reinstall-colour.log", 0, codes.OK, "post-conditions"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(filepath.Join("..", "..", "internal", "parse", "testdata", "legacy", tc.file))
			require.NoError(t, err)
			out := strings.ReplaceAll(string(raw), "SECRETTOKEN123", canaryToken)
			out = strings.ReplaceAll(out, "abc123resolver", canaryResolver)
			w := newWorld(t)
			a := standin.Action{RawStdout: []byte(out), Exit: tc.exit}
			if tc.code == codes.OK {
				a.WriteFiles = map[string]string{w.serviceFile: "[Unit]\n"}
			}
			w.script(standin.Script{Start: a})
			r := w.run("--token", canaryToken, "--retries", "0")
			if tc.code == codes.OK {
				w.assertSuccess(r)
				return
			}
			w.assertFailure(r, tc.code, tc.source)
		})
	}
}
