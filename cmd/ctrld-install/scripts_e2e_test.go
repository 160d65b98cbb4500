//go:build unix

package main

// The MDM and RMM scripts under scripts/, run with real shells (dash and
// bash) against the built ctrld-install and the fake ctrld. Every test has
// its own temporary world and runs in parallel.
//
// Four recorders prove where a secret (token, resolver ID, PIN) goes:
//   - ctrld-install is reached through a wrapper that records its argv and
//     the secret-bearing environment variables it was given, before it
//     execs the built binary with the test's home, service file and fake
//     ctrld;
//   - every command a script runs through PATH goes through a shim that
//     records its argv before it execs the real command;
//   - the fake ctrld records its own argv, the one place a secret belongs;
//   - TMPDIR is private to the run and must stay empty: no script writes a
//     secret to a file.
// Shell builtins (printf hands the secret to ctrld-install's standard input)
// start no process and so have no argv to leak from.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/lock"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// canaryPIN stands for a deactivation PIN.
const canaryPIN = "907182364"

// scriptsDir is the repository's scripts/ directory.
var scriptsDir = filepath.Join("..", "..", "scripts")

func scriptPath(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(scriptsDir, rel))
	require.NoError(t, err)
	require.FileExists(t, p)
	return p
}

// shells are the shells every script runs under: dash, the strict POSIX
// one, in every run; bash as well with CTRLD_INSTALL_SCRIPTS_FULL=1, which
// CI sets. Both at every run would double the suite's largest cost.
func shells(t *testing.T) []string {
	names := []string{"dash"}
	if os.Getenv("CTRLD_INSTALL_SCRIPTS_FULL") == "1" {
		names = append(names, "bash")
	}
	if _, err := exec.LookPath("dash"); err != nil {
		names = []string{"bash"}
	}
	var out []string
	for _, s := range names {
		if p, err := exec.LookPath(s); err == nil {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Skip("no dash or bash")
	}
	return out
}

// forEachShell runs f once per shell, in parallel, each with a fresh rig.
func forEachShell(t *testing.T, f func(t *testing.T, r *rig)) {
	t.Parallel()
	for _, sh := range shells(t) {
		t.Run(filepath.Base(sh), func(t *testing.T) {
			t.Parallel()
			f(t, newRig(t, sh))
		})
	}
}

// rig is a world plus the recorders and the paths the scripts are pointed at.
type rig struct {
	*world
	shell        string
	wrapper      string // the ctrld-install scripts run
	wrapLog      string // one line per ctrld-install run: its arguments, \x1f-separated
	envLog       string // the secret-bearing environment variables each run was given
	execLog      string // one line per command run through PATH
	statusLog    string // the fake's record of ctrld status runs
	uninstallLog string // the fake's record of ctrld uninstall runs
	shimDir      string
	tmp          string // TMPDIR for the scripts: must be empty after every run
	// before is what the recorders held when the last run started.
	before struct{ calls, starts int }
}

func newRig(t *testing.T, shell string) *rig {
	t.Helper()
	w := newWorld(t)
	r := &rig{
		world:        w,
		shell:        shell,
		wrapper:      filepath.Join(w.dir, "wrap", "ctrld-install"),
		wrapLog:      filepath.Join(w.dir, "wrap-argv.log"),
		envLog:       filepath.Join(w.dir, "wrap-env.log"),
		execLog:      filepath.Join(w.dir, "exec.log"),
		statusLog:    filepath.Join(w.dir, "status-argv.jsonl"),
		uninstallLog: filepath.Join(w.dir, "uninstall-argv.jsonl"),
		tmp:          filepath.Join(w.dir, "tmp"),
	}
	require.NoError(t, os.MkdirAll(r.tmp, 0o755))
	r.writeShims()
	r.writeWrapper()
	r.script(standin.Script{Start: w.success()})
	return r
}

// script sets the fake's behaviour. ctrld status reports running only while
// the service file exists, as a real ctrld does, and status and uninstall
// runs are recorded.
func (r *rig) script(s standin.Script) {
	if s.Status.Record == "" {
		s.Status.Record = r.statusLog
	}
	if s.Status.NeedFile == "" {
		s.Status.NeedFile = r.serviceFile
	}
	if s.Uninstall.Record == "" {
		s.Uninstall.Record = r.uninstallLog
	}
	r.world.script(s)
}

// uninstalls is a ctrld uninstall that works, leaking what it can.
func (r *rig) uninstalls() standin.Action {
	return standin.Action{
		RemoveFiles: []string{r.serviceFile},
		Stdout:      append(append([]string{}, leak...), "Mar  4 20:56:15.000 NTC Service uninstalled"),
	}
}

func (r *rig) provisioned() {
	r.t.Helper()
	require.NoError(r.t, os.MkdirAll(filepath.Dir(r.serviceFile), 0o755))
	require.NoError(r.t, os.WriteFile(r.serviceFile, []byte("[Unit]\n"), 0o644))
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// writeWrapper writes the ctrld-install the scripts run. The scripts never
// pass --home or --service-file, so the wrapper's come first and stand; a
// --ctrld from the script (the postinstall passes the package's) wins over
// the wrapper's, which is pflag's last-one-wins.
func (r *rig) writeWrapper() {
	r.t.Helper()
	require.NoError(r.t, os.MkdirAll(filepath.Dir(r.wrapper), 0o755))
	verifyHome := "--home " + shQuote(r.home) + " "
	script := fmt.Sprintf(`#!/bin/sh
{
	first=1
	for a in "$@"; do
		if [ -z "$first" ]; then printf '\037'; fi
		printf '%%s' "$a"
		first=
	done
	printf '\n'
} >>%[1]s
printf '%%s|%%s|%%s\n' "${CTRLD_PROVISION_TOKEN-}" "${CTRLD_PROVISION_RESOLVER-}" "${CTRLD_DEACTIVATION_PIN-}" >>%[2]s
case $1 in
status) shift; exec %[3]s status --home %[4]s "$@" ;;
verify) shift; exec %[3]s verify --ctrld %[5]s %[7]s--service-file %[6]s "$@" ;;
uninstall) shift; exec %[3]s uninstall --ctrld %[5]s --home %[4]s --service-file %[6]s "$@" ;;
*) exec %[3]s --ctrld %[5]s --home %[4]s --service-file %[6]s "$@" ;;
esac
`, shQuote(r.wrapLog), shQuote(r.envLog), shQuote(installerBin), shQuote(r.home), shQuote(r.fake), shQuote(r.serviceFile), verifyHome)
	require.NoError(r.t, os.WriteFile(r.wrapper, []byte(script), 0o755))
}

const shim = `#!/bin/sh
n=${0##*/}
if [ -n "${SCRIPTS_TEST_EXEC_LOG:-}" ]; then
	{
		printf '%s' "$n"
		for a in "$@"; do printf '\037%s' "$a"; done
		printf '\n'
	} >>"$SCRIPTS_TEST_EXEC_LOG"
fi
for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do
	if [ -f "$d/$n" ] && [ -x "$d/$n" ]; then
		exec "$d/$n" "$@"
	fi
done
exit 127
`

// sharedShims is a directory with a recording shim in front of every
// command in the system directories, so any process a script starts through
// PATH is seen. It is made once, beside the built ctrld-install (TestMain
// removes both): the shims log to the file their environment names, so
// every rig can share them.
var sharedShims = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp(filepath.Dir(installerBin), "shims-")
	if err != nil {
		return "", err
	}
	target := filepath.Join(dir, ".shim")
	if err := os.WriteFile(target, []byte(shim), 0o755); err != nil {
		return "", err
	}
	seen := map[string]bool{}
	for _, d := range []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"} {
		entries, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			n := e.Name()
			if seen[n] || strings.HasPrefix(n, ".") {
				continue
			}
			seen[n] = true
			if err := os.Symlink(target, filepath.Join(dir, n)); err != nil {
				return "", err
			}
		}
	}
	if !seen["date"] || !seen["rm"] || !seen["printf"] {
		return "", fmt.Errorf("the shims must cover the commands the scripts use")
	}
	return dir, nil
})

func (r *rig) writeShims() {
	r.t.Helper()
	dir, err := sharedShims()
	require.NoError(r.t, err)
	r.shimDir = dir
}

// env is the environment a script runs with: the overrides the scripts
// document, the recorders, and extra.
func (r *rig) env(extra ...string) []string {
	env := append(cleanEnv(),
		"PATH="+r.shimDir+":"+os.Getenv("PATH"),
		"TMPDIR="+r.tmp,
		"CTRLD_INSTALL_BIN="+r.wrapper,
		"CTRLD_INSTALL_HOME="+r.home,
		"CTRLD_INSTALL_LOG="+r.logFile,
		"CTRLD_INSTALL_CTRLD="+r.fake,
		"CTRLD_INSTALL_SERVICE_FILE="+r.serviceFile,
		"SCRIPTS_TEST_EXEC_LOG="+r.execLog,
	)
	return append(env, extra...)
}

func (r *rig) command(script string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(r.shell, append([]string{script}, args...)...)
	cmd.Env = env
	cmd.Dir = r.dir
	return cmd
}

// runScript runs script with the rig's shell and waits for it.
func (r *rig) runScript(script string, env []string, args ...string) result {
	r.t.Helper()
	// One run's log, so its lines can be compared with that run's output.
	require.NoError(r.t, os.RemoveAll(r.logFile))
	r.before.calls = len(r.installerCalls())
	r.before.starts = r.starts()
	cmd := r.command(script, env, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	err := cmd.Run()
	res := result{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(t0)}
	if ee, ok := err.(*exec.ExitError); ok {
		res.exit = ee.ExitCode()
	} else {
		require.NoError(r.t, err)
	}
	return res
}

// withSettings copies the script at rel into the rig, with the settings at
// its top filled in (the empty quotes after each name get the value), the
// way an admin edits a script before uploading it.
func (r *rig) withSettings(rel string, settings map[string]string) string {
	r.t.Helper()
	src, err := os.ReadFile(scriptPath(r.t, rel))
	require.NoError(r.t, err)
	for name, value := range settings {
		re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `=''`)
		require.Len(r.t, re.FindAllIndex(src, -1), 1, "%s has one %s='' at the start of a line", rel, name)
		src = re.ReplaceAll(src, []byte(name+"="+shQuote(value)))
	}
	p := filepath.Join(r.dir, "edited-"+filepath.Base(rel))
	require.NoError(r.t, os.WriteFile(p, src, 0o700))
	return p
}

func splitRecords(path string) [][]string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var out [][]string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l == "" {
			out = append(out, nil)
			continue
		}
		out = append(out, strings.Split(l, "\x1f"))
	}
	return out
}

// installerCalls is the argv, less argv[0], of every ctrld-install run.
func (r *rig) installerCalls() [][]string { return splitRecords(r.wrapLog) }

// lastCall is the argv of the last ctrld-install run.
func (r *rig) lastCall() []string {
	r.t.Helper()
	calls := r.installerCalls()
	require.NotEmpty(r.t, calls, "ctrld-install ran")
	return calls[len(calls)-1]
}

// commands is every command a script or the wrapper ran through PATH.
func (r *rig) commands() [][]string { return splitRecords(r.execLog) }

func (r *rig) ranCommand(name string) bool {
	for _, c := range r.commands() {
		if len(c) > 0 && c[0] == name {
			return true
		}
	}
	return false
}

// uninstallCalls is how ctrld uninstall was run, one argv per run.
func (r *rig) uninstallCalls() [][]string {
	r.t.Helper()
	b, err := os.ReadFile(r.uninstallLog)
	if err != nil {
		return nil
	}
	var out [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec standin.Record
		require.NoError(r.t, json.Unmarshal([]byte(l), &rec))
		out = append(out, rec.Argv[1:])
	}
	return out
}

// assertSecretContained checks that the secret went to ctrld's argv and
// nowhere else: not on ctrld-install's argv or any other command's, not in
// ctrld-install's or ctrld's environment, not in any output, the log, the
// home or the recorders, and that no file was written for it.
func (r *rig) assertSecretContained(res result, secret string) {
	r.t.Helper()
	r.assertNoCanary(res)
	for _, canary := range []string{canaryToken, canaryResolver, canaryPIN, canaryLower} {
		for name, p := range map[string]string{"ctrld-install's argv": r.wrapLog, "ctrld-install's environment": r.envLog,
			"a command's argv": r.execLog, "ctrld status's argv": r.statusLog} {
			b, _ := os.ReadFile(p)
			assert.NotContains(r.t, string(b), canary, "a secret is in %s", name)
		}
	}
	if _, err := os.Stat(r.argvFile); err == nil && secret != "" {
		for _, c := range r.argv() {
			assert.Contains(r.t, c.Argv, secret, "ctrld start gets the secret")
			for _, kv := range c.Env {
				assert.NotContains(r.t, kv, secret, "the secret is in ctrld's environment")
			}
		}
	}
	assert.False(r.t, r.ranCommand("mktemp"), "no temporary file")
	r.assertTmpEmpty()
}

func (r *rig) assertTmpEmpty() {
	r.t.Helper()
	entries, err := os.ReadDir(r.tmp)
	require.NoError(r.t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Empty(r.t, names, "nothing is written to TMPDIR")
}

// assertInstallerLines checks that stdout is ctrld-install's own lines:
// each starts with "ctrld-install: " and the log has them all, in the same
// order (the log may have more: a run header, the stderr lines).
func (r *rig) assertInstallerLines(res result) []string {
	r.t.Helper()
	require.NotEmpty(r.t, res.stdout)
	out := strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n")
	for _, l := range out {
		assert.True(r.t, strings.HasPrefix(l, "ctrld-install: "), l)
	}
	i := 0
	for _, l := range strings.Split(strings.TrimSuffix(r.log(), "\n"), "\n") {
		_, rest, ok := strings.Cut(l, " ")
		require.True(r.t, ok, l)
		if i < len(out) && rest == out[i] {
			i++
		}
	}
	assert.Equal(r.t, len(out), i, "the log has stdout's lines, in order\nstdout:\n%s\nlog:\n%s", res.stdout, r.log())
	return out
}

func lastLine(lines []string) string { return lines[len(lines)-1] }

func failureLine(name string) string {
	c := codes.Must(name)
	return fmt.Sprintf("ctrld-install: provisioning failed: stage=%s code=%s (exit %d)", c.Stage, c.Name, c.Exit)
}

const (
	usageLine          = "ctrld-install: provisioning failed: stage=installer code=INSTALLER_USAGE (exit 61)"
	uninstallUsageLine = "ctrld-install: uninstall failed: stage=installer code=INSTALLER_USAGE (exit 61)"
)

// identifierFailure is a ctrld start that fails with code name the way a
// contract ctrld does, leaking the token on the way.
func identifierFailure(name string) standin.Action {
	c := codes.Must(name)
	return standin.Action{
		Stdout: append(append([]string{}, leak...), fmt.Sprintf("provisioning failed: stage=%s code=%s (exit %d)", c.Stage, c.Name, c.Exit)),
		Exit:   c.Exit,
	}
}

func (r *rig) assertCtrldNeverStarted() {
	r.t.Helper()
	_, err := os.Stat(r.argvFile)
	assert.True(r.t, os.IsNotExist(err), "ctrld start must not run")
}

// starts counts the runs of ctrld start so far.
func (r *rig) starts() int {
	if _, err := os.Stat(r.argvFile); err != nil {
		return 0
	}
	return len(r.argv())
}

// assertUsageError checks a script's own usage error: the sentence on
// stderr, the INSTALLER_USAGE line alone on stdout, both in the log, the
// exit status, and that ctrld-install never ran.
func (r *rig) assertUsageError(res result, line string, exit int, sentence string) {
	r.t.Helper()
	assert.Equal(r.t, exit, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	assert.Equal(r.t, "ctrld-install: error: "+sentence+"\n", res.stderr)
	assert.Equal(r.t, line+"\n", res.stdout)
	assert.Regexp(r.t, `(?m)^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ ctrld-install: error: `+regexp.QuoteMeta(sentence)+"\n"+
		`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ `+regexp.QuoteMeta(line)+"\n$", r.log())
	assert.Len(r.t, r.installerCalls(), r.before.calls, "ctrld-install must not run")
	assert.Equal(r.t, r.before.starts, r.starts(), "ctrld start must not run")
	assert.True(r.t, r.ranCommand("date"), "the shims saw the script's commands: %v", r.commands())
	r.assertSecretContained(res, "")
}

// scriptError matches the one line a script prints for its own failures.
func scriptError(script string) *regexp.Regexp {
	return regexp.MustCompile(`^ctrld-install-` + script + `: error: [a-z-][^\n]*[^.\n]\n$`)
}

// stagePkg stages the package with build-pkg.sh and points the rig at the
// staged ctrld: the postinstall then runs against the package's own layout.
func (r *rig) stagePkg(args ...string) (stage string) {
	r.t.Helper()
	stage = filepath.Join(r.dir, "stage")
	full := append([]string{"--stage-only", stage, "--ctrld", r.fake, "--ctrld-install", r.wrapper, "--version", "1.5.0"}, args...)
	res := r.runScript(scriptPath(r.t, "pkg/build-pkg.sh"), r.env(), full...)
	require.Equal(r.t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	r.fake = filepath.Join(stage, "root", "usr", "local", "bin", "ctrld")
	r.script(standin.Script{Start: r.world.success()})
	return stage
}

// pkgEnv points the postinstall at the staged payload.
func (r *rig) pkgEnv(stage string, extra ...string) []string {
	bin := filepath.Join(stage, "root", "usr", "local", "bin")
	return r.env(append([]string{
		"CTRLD_INSTALL_BIN=" + filepath.Join(bin, "ctrld-install"),
		"CTRLD_INSTALL_CTRLD=" + filepath.Join(bin, "ctrld"),
	}, extra...)...)
}

func (r *rig) writeSecret(name, value string) string {
	p := filepath.Join(r.dir, name)
	require.NoError(r.t, os.WriteFile(p, []byte(value+"\n"), 0o600))
	return p
}

func TestScriptsBuildPkgStaging(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	r := newRig(t, shells(t)[0])
	tok := r.writeSecret("org-token", canaryToken)
	res0 := r.writeSecret("org-resolver", canaryResolver)
	stage := filepath.Join(r.dir, "stage")
	res := r.runScript(scriptPath(t, "pkg/build-pkg.sh"), r.env(),
		"--stage-only", stage, "--ctrld", r.fake, "--ctrld-install", r.wrapper, "--version", "1.5.0", "--token-file", tok)
	require.Equal(t, 0, res.exit, res.stderr)
	assert.Equal(t, "ctrld-install-build-pkg: staged in "+stage+"\n", res.stdout)
	assert.Empty(t, res.stderr)

	staged := func(stage string) []string {
		var files []string
		require.NoError(t, filepath.Walk(stage, func(p string, fi os.FileInfo, err error) error {
			require.NoError(t, err)
			if !fi.IsDir() {
				rel, _ := filepath.Rel(stage, p)
				files = append(files, fmt.Sprintf("%s %o", rel, fi.Mode().Perm()))
			}
			return nil
		}))
		return files
	}
	assert.ElementsMatch(t, []string{
		"root/usr/local/bin/ctrld 755",
		"root/usr/local/bin/ctrld-install 755",
		"scripts/postinstall 755",
		"scripts/provision_token 600",
	}, staged(stage))
	for src, dst := range map[string]string{
		r.fake:                           "root/usr/local/bin/ctrld",
		r.wrapper:                        "root/usr/local/bin/ctrld-install",
		scriptPath(t, "pkg/postinstall"): "scripts/postinstall",
		tok:                              "scripts/provision_token",
	} {
		want, err := os.ReadFile(src)
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join(stage, dst))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(want, got), "%s is a copy of %s", dst, src)
	}
	assert.NotContains(t, res.stdout+res.stderr, canaryToken)

	t.Run("resolver", func(t *testing.T) {
		stage := filepath.Join(r.dir, "resolver")
		res := r.runScript(scriptPath(t, "pkg/build-pkg.sh"), r.env(),
			"--stage-only", stage, "--ctrld", r.fake, "--ctrld-install", r.wrapper, "--version", "1.5.0", "--resolver-file", res0)
		require.Equal(t, 0, res.exit, res.stderr)
		assert.Empty(t, res.stderr)
		assert.Contains(t, staged(stage), "scripts/provision_resolver 600")
		assert.NotContains(t, staged(stage), "scripts/provision_token 600")
		b, err := os.ReadFile(filepath.Join(stage, "scripts", "provision_resolver"))
		require.NoError(t, err)
		assert.Equal(t, canaryResolver+"\n", string(b))
		assert.NotContains(t, res.stdout+res.stderr, canaryResolver)
	})
	t.Run("payload only", func(t *testing.T) {
		stage := filepath.Join(r.dir, "payload-only")
		res := r.runScript(scriptPath(t, "pkg/build-pkg.sh"), r.env(),
			"--stage-only", stage, "--ctrld", r.fake, "--ctrld-install", r.wrapper, "--version", "1.5.0", "--payload-only")
		require.Equal(t, 0, res.exit, res.stderr)
		assert.NoDirExists(t, filepath.Join(stage, "scripts"))
		assert.FileExists(t, filepath.Join(stage, "root", "usr", "local", "bin", "ctrld-install"))
	})
	t.Run("no token notes the postinstall's need", func(t *testing.T) {
		res := r.runScript(scriptPath(t, "pkg/build-pkg.sh"), r.env(),
			"--stage-only", filepath.Join(r.dir, "no-token"), "--ctrld", r.fake, "--ctrld-install", r.wrapper, "--version", "1.5.0")
		require.Equal(t, 0, res.exit, res.stderr)
		assert.Contains(t, res.stderr, "ctrld-install-build-pkg: note: no --token-file")
		assert.NoFileExists(t, filepath.Join(r.dir, "no-token", "scripts", "provision_token"))
	})
	for _, tc := range []struct {
		name    string
		args    []string
		message string
	}{
		{"not on macOS", []string{"--ctrld", r.fake, "--ctrld-install", r.wrapper, "--version", "1.5.0"},
			"pkgbuild and productbuild are only on macOS; use --stage-only DIR"},
		{"missing version", []string{"--stage-only", filepath.Join(r.dir, "x"), "--ctrld", r.fake, "--ctrld-install", r.wrapper},
			"--ctrld, --ctrld-install and --version are required"},
		{"bad version", []string{"--stage-only", filepath.Join(r.dir, "x"), "--ctrld", r.fake, "--ctrld-install", r.wrapper, "--version", "1.0; rm"},
			"the version may contain only"},
		{"stage exists", []string{"--stage-only", stage, "--ctrld", r.fake, "--ctrld-install", r.wrapper, "--version", "1"},
			"the staging directory must not exist yet"},
		{"token and payload only", []string{"--stage-only", filepath.Join(r.dir, "x"), "--ctrld", r.fake, "--ctrld-install", r.wrapper,
			"--version", "1", "--token-file", tok, "--payload-only"}, "--token-file and --resolver-file exclude --payload-only"},
		{"token and resolver", []string{"--stage-only", filepath.Join(r.dir, "x"), "--ctrld", r.fake, "--ctrld-install", r.wrapper,
			"--version", "1", "--token-file", tok, "--resolver-file", res0}, "--token-file and --resolver-file exclude each other"},
		{"unknown argument", []string{"--bogus"}, "an unknown argument was given"},
		{"a token given as an argument is not repeated", []string{"--token=" + canaryToken}, "an unknown argument was given"},
		{"a missing binary is not named", []string{"--stage-only", filepath.Join(r.dir, "x"), "--ctrld", filepath.Join(r.dir, canaryToken),
			"--ctrld-install", r.wrapper, "--version", "1"}, "the --ctrld file does not exist"},
		{"a missing resolver file is not named", []string{"--stage-only", filepath.Join(r.dir, "x"), "--ctrld", r.fake,
			"--ctrld-install", r.wrapper, "--version", "1", "--resolver-file", filepath.Join(r.dir, canaryResolver)}, "the resolver file does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "not on macOS" {
				if out, _ := exec.Command("uname", "-s").Output(); strings.TrimSpace(string(out)) == "Darwin" {
					t.Skip("this is macOS")
				}
			}
			res := r.runScript(scriptPath(t, "pkg/build-pkg.sh"), r.env(), tc.args...)
			assert.Equal(t, 1, res.exit)
			assert.Empty(t, res.stdout)
			assert.Regexp(t, scriptError("build-pkg"), res.stderr)
			assert.Contains(t, res.stderr, tc.message)
			assert.NotContains(t, res.stderr, canaryToken)
			assert.NotContains(t, res.stderr, canaryResolver)
			assert.NoDirExists(t, filepath.Join(r.dir, "x"))
		})
	}
}

func TestScriptsPostinstall(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		// Installer's arguments: package path, install location, target volume.
		stage := r.stagePkg("--token-file", r.writeSecret("org-token", canaryToken))
		postinstall := filepath.Join(stage, "scripts", "postinstall")
		res := r.runScript(postinstall, r.pkgEnv(stage), "/tmp/ctrld.pkg", "/", "/")
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		lines := r.assertInstallerLines(res)
		assert.Equal(t, "ctrld-install: provisioning succeeded (exit 0)", lastLine(lines))
		assert.Empty(t, res.stderr)
		bin := filepath.Join(stage, "root", "usr", "local", "bin")
		assert.Equal(t, [][]string{{"--ctrld", filepath.Join(bin, "ctrld"), "--log", r.logFile,
			"--token-file", filepath.Join(stage, "scripts", "provision_token")}}, r.installerCalls(),
			"the package's ctrld, the package's token file, read by ctrld-install itself")
		require.Len(t, r.argv(), 1)
		assert.Equal(t, []string{filepath.Join(bin, "ctrld"), "start", "--cd-org", canaryToken}, r.argv()[0].Argv)
		r.assertSecretContained(res, canaryToken)
		assert.FileExists(t, filepath.Join(stage, "scripts", "provision_token"), "the package's own token file is Installer's to remove")
	})
}

// Installer runs the script as ./postinstall from the scripts directory.
func TestScriptsPostinstallRunFromItsDirectory(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		stage := r.stagePkg("--token-file", r.writeSecret("org-token", canaryToken))
		require.NoError(t, os.RemoveAll(r.logFile))
		cmd := r.command("./postinstall", r.pkgEnv(stage), "/tmp/ctrld.pkg", "/", "/")
		cmd.Dir = filepath.Join(stage, "scripts")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		require.NoError(t, cmd.Run(), "stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
		res := result{stdout: out.String(), stderr: errb.String()}
		assert.Equal(t, "ctrld-install: provisioning succeeded (exit 0)", lastLine(r.assertInstallerLines(res)))
		call := r.lastCall()
		assert.Equal(t, filepath.Join(stage, "scripts", "provision_token"), call[len(call)-1], "an absolute path")
		r.assertSecretContained(res, canaryToken)
	})
}

func TestScriptsPostinstallTokenFromEnvironment(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		stage := r.stagePkg()
		res := r.runScript(filepath.Join(stage, "scripts", "postinstall"), r.pkgEnv(stage, "CTRLD_PROVISION_TOKEN="+canaryToken), "/tmp/ctrld.pkg", "/", "/")
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		r.assertInstallerLines(res)
		bin := filepath.Join(stage, "root", "usr", "local", "bin")
		assert.Equal(t, [][]string{{"--ctrld", filepath.Join(bin, "ctrld"), "--log", r.logFile, "--token-stdin"}}, r.installerCalls())
		r.assertSecretContained(res, canaryToken)
	})
}

// CTRLD_INSTALL_* settings for a hand-run `sudo VAR=... installer -pkg`;
// force provisions a healthy ctrld again.
func TestScriptsPostinstallSettings(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		stage := r.stagePkg("--token-file", r.writeSecret("org-token", canaryToken))
		postinstall := filepath.Join(stage, "scripts", "postinstall")
		res := r.runScript(postinstall, r.pkgEnv(stage), "/tmp/ctrld.pkg", "/", "/")
		require.Equal(t, 0, res.exit)
		res = r.runScript(postinstall, r.pkgEnv(stage, "CTRLD_INSTALL_TIMEOUT=4m", "CTRLD_INSTALL_RETRIES=1",
			"CTRLD_INSTALL_MIN_VERSION=1.5.0", "CTRLD_INSTALL_FORCE=yes"), "/tmp/ctrld.pkg", "/", "/")
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "ctrld-install: provisioning succeeded (exit 0)", lastLine(r.assertInstallerLines(res)))
		bin := filepath.Join(stage, "root", "usr", "local", "bin")
		assert.Equal(t, []string{"--ctrld", filepath.Join(bin, "ctrld"), "--log", r.logFile, "--timeout", "4m", "--retries", "1",
			"--min-version", "1.5.0", "--force", "--token-file", filepath.Join(stage, "scripts", "provision_token")}, r.lastCall())
		assert.Len(t, r.argv(), 2, "forced: ctrld start ran again on the healthy machine")
		r.assertSecretContained(res, canaryToken)

		res = r.runScript(postinstall, r.pkgEnv(stage, "CTRLD_INSTALL_FORCE=always"), "/tmp/ctrld.pkg", "/", "/")
		r.assertUsageError(res, usageLine, 61, "CTRLD_INSTALL_FORCE must be yes or no")
	})
}

func TestScriptsPostinstallResolverFile(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		stage := r.stagePkg("--resolver-file", r.writeSecret("org-resolver", canaryResolver))
		res := r.runScript(filepath.Join(stage, "scripts", "postinstall"), r.pkgEnv(stage), "/tmp/ctrld.pkg", "/", "/")
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "--resolver-file", r.lastCall()[4])
		assert.Contains(t, r.argv()[0].Argv, "--cd")
		r.assertSecretContained(res, canaryResolver)
	})
}

func TestScriptsPostinstallResolverFromEnvironment(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		stage := r.stagePkg()
		res := r.runScript(filepath.Join(stage, "scripts", "postinstall"), r.pkgEnv(stage, "CTRLD_PROVISION_RESOLVER="+canaryResolver), "/tmp/ctrld.pkg", "/", "/")
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "--resolver-stdin", r.lastCall()[4])
		assert.Contains(t, r.argv()[0].Argv, "--cd")
		r.assertSecretContained(res, canaryResolver)
	})
}

func TestScriptsPostinstallPassesTheOutcomeThrough(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		stage := r.stagePkg("--token-file", r.writeSecret("org-token", canaryToken))
		r.script(standin.Script{Start: identifierFailure(codes.ListenerBindFailed)})
		res := r.runScript(filepath.Join(stage, "scripts", "postinstall"), r.pkgEnv(stage), "/tmp/ctrld.pkg", "/", "/")
		assert.Equal(t, 41, res.exit)
		lines := r.assertInstallerLines(res)
		assert.Contains(t, lines, failureLine(codes.ListenerBindFailed))
		assert.Contains(t, lines, "ctrld-install: next step: "+codes.Must(codes.ListenerBindFailed).NextStep)
		r.assertSecretContained(res, canaryToken)
	})
}

func TestScriptsPostinstallRefusals(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		stage := r.stagePkg()
		postinstall := filepath.Join(stage, "scripts", "postinstall")

		// Another volume: refused before anything runs, in one line.
		res := r.runScript(postinstall, r.pkgEnv(stage, "CTRLD_PROVISION_TOKEN="+canaryToken), "/tmp/ctrld.pkg", "/Volumes/Data", "/Volumes/Data")
		assert.Equal(t, codes.Must(codes.InstallerUsage).Exit, res.exit)
		assert.Empty(t, res.stdout)
		assert.Regexp(t, scriptError("postinstall"), res.stderr)
		assert.Contains(t, res.stderr, "the target volume is /Volumes/Data, not the startup disk")
		assert.Empty(t, r.installerCalls())
		r.assertSecretContained(res, "")

		// No token anywhere: said in the words of the package, not of
		// ctrld-install's flags, and ctrld-install never runs.
		res = r.runScript(postinstall, r.pkgEnv(stage), "/tmp/ctrld.pkg", "/", "/")
		r.assertUsageError(res, usageLine, 61,
			"no token: the package carries no provision_token and CTRLD_PROVISION_TOKEN is not set; build it with --token-file")

		res = r.runScript(postinstall, r.pkgEnv(stage, "CTRLD_PROVISION_TOKEN="+canaryToken, "CTRLD_PROVISION_RESOLVER="+canaryResolver), "/tmp/ctrld.pkg", "/", "/")
		r.assertUsageError(res, usageLine, 61, "a token and a resolver ID exclude each other; build the package with one of them")

		// An incomplete package.
		res = r.runScript(postinstall, r.pkgEnv(stage, "CTRLD_PROVISION_TOKEN="+canaryToken, "CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing")), "/tmp/ctrld.pkg", "/", "/")
		assert.Equal(t, codes.Must(codes.InstallerFailed).Exit, res.exit)
		assert.Empty(t, res.stdout)
		assert.Regexp(t, scriptError("postinstall"), res.stderr)
		r.assertTmpEmpty()
	})
}

// An MDM agent that gives up kills the script's process group: ctrld-install
// reports INSTALLER_INTERRUPTED and the script exits with that. There is no
// token file to leave behind, at any moment of the run.
func TestScriptsSignalEndsTheRun(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		stage := r.stagePkg()
		r.script(standin.Script{Start: standin.Action{Hang: true, Stdout: leak}})
		cmd := r.command(filepath.Join(stage, "scripts", "postinstall"), r.pkgEnv(stage, "CTRLD_PROVISION_TOKEN="+canaryToken), "/tmp/ctrld.pkg", "/", "/")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		require.NoError(t, os.RemoveAll(r.logFile))
		require.NoError(t, cmd.Start())
		require.Eventually(t, func() bool {
			b, err := os.ReadFile(r.argvFile)
			return err == nil && len(b) > 0
		}, 20*time.Second, 20*time.Millisecond)
		r.assertTmpEmpty()
		require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM))
		err := cmd.Wait()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		res := result{stdout: out.String(), stderr: errb.String(), exit: ee.ExitCode()}
		assert.Equal(t, codes.Must(codes.InstallerInterrupted).Exit, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		lines := r.assertInstallerLines(res)
		assert.Contains(t, lines, failureLine(codes.InstallerInterrupted))
		r.assertSecretContained(res, canaryToken)
		r.assertGroupGone()
	})
}

// jamf runs a Jamf policy script with Jamf's first three arguments (mount
// point, computer name, user) before params, which start at $4.
func (r *rig) jamf(rel string, env []string, params ...string) result {
	r.t.Helper()
	return r.runScript(scriptPath(r.t, rel), env, append([]string{"/", "mac-1", "admin"}, params...)...)
}

func TestScriptsJamfPolicy(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		// $4 the token, $5 the flags: a glob in $5 reaches ctrld unexpanded.
		// Jamf passes every parameter, empty or not.
		res := r.jamf("jamf/policy.sh", r.env(), canaryToken, "--custom-hostname=mac-* --intercept-mode=dns", "", "", "", "", "", "")
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "ctrld-install: provisioning succeeded (exit 0)", lastLine(r.assertInstallerLines(res)))
		assert.Equal(t, [][]string{{"--exit-profile", "jamf", "--log", r.logFile, "--token-stdin",
			"--", "--custom-hostname=mac-*", "--intercept-mode=dns"}}, r.installerCalls())
		assert.Equal(t, []string{"start", "--cd-org", canaryToken, "--custom-hostname=mac-*", "--intercept-mode=dns"}, r.argv()[0].Argv[1:])
		r.assertSecretContained(res, canaryToken)
	})
}

// The "done when": parameters 6 to 9 become ctrld-install flags.
func TestScriptsJamfPolicySettings(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		res := r.jamf("jamf/policy.sh", r.env(), canaryToken, "")
		require.Equal(t, 0, res.exit)

		res = r.jamf("jamf/policy.sh", r.env(), canaryToken, "", "timeout=60s", "force=yes", "min-version=1.5.0", "exit-profile=jamf", "", "")
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		lines := r.assertInstallerLines(res)
		assert.Equal(t, "ctrld-install: provisioning succeeded (exit 0)", lastLine(lines))
		assert.Regexp(t, `time left [23]\ds`, strings.Join(lines, "\n"), "the budget is the one given")
		assert.Equal(t, []string{"--exit-profile", "jamf", "--log", r.logFile, "--timeout", "60s", "--min-version", "1.5.0",
			"--force", "--token-stdin"}, r.lastCall())
		assert.Len(t, r.argv(), 2, "force=yes: provisioned again although healthy")
		r.assertSecretContained(res, canaryToken)

		// Any order, any of the six parameters; another profile.
		res = r.jamf("jamf/policy.sh", r.env(), canaryToken, "", "", "", "", "", "retries=0", "exit-profile=default")
		require.Equal(t, 0, res.exit)
		assert.Equal(t, []string{"--exit-profile", "default", "--log", r.logFile, "--retries", "0", "--token-stdin"}, r.lastCall())
		assert.Equal(t, "ctrld-install: already provisioned, nothing to do (exit 0)\n", res.stdout)
	})
}

func TestScriptsJamfPolicyUsageErrors(t *testing.T) {
	fullE2E(t)
	keys := "the keys are timeout=, retries=, min-version=, force=, exit-profile=, resolver="
	for _, tc := range []struct {
		name     string
		params   []string
		sentence string
	}{
		{"unknown key", []string{canaryToken, "", "colour=blue"}, "parameter 6 has the unknown key colour=; " + keys},
		{"unknown key later", []string{canaryToken, "", "timeout=30s", "", "", "", "", "colour=blue"}, "parameter 11 has the unknown key colour=; " + keys},
		{"a secret in the key's place is not named", []string{"", "", canaryToken + "=="}, "parameter 6 has an unknown key; " + keys},
		{"a lower-case secret is not named", []string{"", "", canaryLower + "=x"}, "parameter 6 has an unknown key; " + keys},
		// Two keys run together are one unknown key, not a silent default.
		{"a key with a space", []string{canaryToken, "", "timeout retries=3"}, "parameter 6 has an unknown key; " + keys},
		{"no equals sign", []string{"", "", canaryToken}, "parameter 6 is not of the form key=value"},
		{"bad duration", []string{canaryToken, "", "timeout=" + canaryLower}, "timeout= in parameter 6 needs a duration such as 90s or 10m"},
		{"empty duration", []string{canaryToken, "", "", "timeout="}, "timeout= in parameter 7 needs a duration such as 90s or 10m"},
		{"bad retries", []string{canaryToken, "", "retries=-1"}, "retries= in parameter 6 needs a whole number such as 2"},
		{"bad version", []string{canaryToken, "", "min-version=latest"}, "min-version= in parameter 6 needs a version such as 1.5.0"},
		{"bad force", []string{canaryToken, "", "force=maybe"}, "force= in parameter 6 must be yes or no"},
		{"bad profile", []string{canaryToken, "", "exit-profile=" + canaryToken}, "exit-profile= in parameter 6 must be one of default, intune, filewave, jamf"},
		{"twice", []string{canaryToken, "", "timeout=30s", "timeout=40s"}, "timeout= is given twice"},
		{"empty resolver", []string{"", "", "resolver="}, "resolver= in parameter 6 is empty"},
		{"token and resolver", []string{canaryToken, "", "resolver=" + canaryResolver},
			"parameter 4 (the provisioning token) and resolver= exclude each other; give one of them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachShell(t, func(t *testing.T, r *rig) {
				// An exported token never stands in for parameter 4.
				res := r.jamf("jamf/policy.sh", r.env("CTRLD_PROVISION_TOKEN="+canaryToken), tc.params...)
				r.assertUsageError(res, usageLine, 61, tc.sentence)
			})
		})
	}
}

func TestScriptsJamfPolicyResolver(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		res := r.jamf("jamf/policy.sh", r.env(), "", "", "", "resolver="+canaryResolver)
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, []string{"--exit-profile", "jamf", "--log", r.logFile, "--resolver-stdin"}, r.lastCall())
		assert.Contains(t, r.argv()[0].Argv, "--cd")
		assert.NotContains(t, r.argv()[0].Argv, "--cd-org")
		r.assertSecretContained(res, canaryResolver)
	})
}

func TestScriptsJamfPolicyExitProfile(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		// A PIN-protected ctrld is already managed: every surface says so,
		// and the policy does not fail.
		r.script(standin.Script{Start: standin.Action{Exit: 126}})
		res := r.jamf("jamf/policy.sh", r.env(), canaryToken)
		assert.Equal(t, 0, res.exit)
		lines := r.assertInstallerLines(res)
		assert.Contains(t, lines, failureLine(codes.DeactivationPinRequired))
		assert.Equal(t, codes.DeactivationPinRequired, r.record().Code)
		r.assertSecretContained(res, canaryToken)

		// A fatal code keeps its number. (The same request after the PIN
		// stopped it waits out its pause, which the test ends.)
		r.endPause()
		r.script(standin.Script{Start: identifierFailure(codes.APIRejected)})
		res = r.jamf("jamf/policy.sh", r.env(), canaryToken)
		assert.Equal(t, codes.Must(codes.APIRejected).Exit, res.exit)
		assert.Contains(t, r.assertInstallerLines(res), failureLine(codes.APIRejected))
		r.assertSecretContained(res, canaryToken)

		// The package did not run first.
		res = r.jamf("jamf/policy.sh", r.env("CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing")), canaryToken)
		assert.Equal(t, codes.Must(codes.InstallerFailed).Exit, res.exit)
		assert.Empty(t, res.stdout)
		assert.Regexp(t, scriptError("jamf"), res.stderr)
		r.assertTmpEmpty()
	})
}

func TestScriptsJamfExtensionAttribute(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		ea := scriptPath(t, "jamf/extension-attribute.sh")
		res := r.runScript(ea, r.env())
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, "<result>NEVER_RUN</result>\n", res.stdout)

		r.script(standin.Script{Start: identifierFailure(codes.ListenerBindFailed)})
		r.jamf("jamf/policy.sh", r.env(), canaryToken)
		res = r.runScript(ea, r.env())
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, "<result>LISTENER_BIND_FAILED</result>\n", res.stdout)
		assert.Empty(t, res.stderr)

		res = r.runScript(ea, r.env("CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing")))
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, "<result>NOT_INSTALLED</result>\n", res.stdout)

		// Whatever else a broken binary prints never reaches inventory.
		for _, printed := range []string{"", "<result>" + canaryToken + "</result>", "<result>OK</result> extra", "<result>lower</result>", "oops"} {
			bad := filepath.Join(r.dir, "bad-status")
			require.NoError(t, os.WriteFile(bad, []byte("#!/bin/sh\nprintf '%s\\n' "+shQuote(printed)+"\n"), 0o755))
			res = r.runScript(ea, r.env("CTRLD_INSTALL_BIN="+bad))
			assert.Equal(t, 0, res.exit)
			assert.Equal(t, "<result>STATUS_FAILED</result>\n", res.stdout, "for %q", printed)
		}
	})
}

// The companion attribute reads verify's answer; this part needs no new
// ctrld-install, only stand-ins that print verify's lines.
func TestScriptsJamfExtensionAttributeVerifyParsing(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		ea := r.withSettings("jamf/extension-attribute-verify.sh", map[string]string{"min_version": "1.6.0"})
		res := r.runScript(ea, r.env("CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing")))
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, "<result>NOT_INSTALLED</result>\n", res.stdout)

		for _, tc := range []struct {
			printed []string
			exit    int
			want    string
		}{
			{[]string{"ctrld-install: verify succeeded (exit 0)"}, 0, "OK"},
			{[]string{"ctrld-install: verify succeeded (exit 0)"}, 1, "STATUS_FAILED"},
			{[]string{"ctrld-install: not installed (exit 54)"}, 54, "NOT_INSTALLED"},
			{[]string{"ctrld-install: verify failed: stage=installer code=CTRLD_VERSION_UNSUPPORTED (exit 67)", "ctrld-install: next step: Deploy a newer ctrld."}, 67, "CTRLD_VERSION_UNSUPPORTED"},
			{[]string{"ctrld-install: next step: Look.", "ctrld-install: verify failed: stage=service code=SERVICE_NOT_RUNNING (exit 55)"}, 55, "SERVICE_NOT_RUNNING"},
			{[]string{"ctrld-install: verify failed: stage=service code=" + canaryToken + " (exit 55)"}, 55, "STATUS_FAILED"},
			{[]string{"ctrld-install: verify failed: stage=service code= (exit 55)"}, 55, "STATUS_FAILED"},
			{[]string{"something " + canaryLower}, 3, "STATUS_FAILED"},
			{nil, 0, "STATUS_FAILED"},
		} {
			stub := filepath.Join(r.dir, "stub-verify")
			body := "#!/bin/sh\nprintf '%s\\n' \"$*\" >>" + shQuote(r.wrapLog) + "\n"
			for _, l := range tc.printed {
				body += "printf '%s\\n' " + shQuote(l) + "\n"
			}
			body += fmt.Sprintf("exit %d\n", tc.exit)
			require.NoError(t, os.WriteFile(stub, []byte(body), 0o755))
			res := r.runScript(ea, r.env("CTRLD_INSTALL_BIN="+stub))
			assert.Equal(t, 0, res.exit)
			assert.Equal(t, "<result>"+tc.want+"</result>\n", res.stdout, "for %q", tc.printed)
			assert.Empty(t, res.stderr)
		}
		assert.Equal(t, "verify --timeout 30s --min-version 1.6.0", r.lastCall()[0])
	})
}

func TestScriptsJamfExtensionAttributeVerify(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		ea := scriptPath(t, "jamf/extension-attribute-verify.sh")
		res := r.runScript(ea, r.env())
		assert.Equal(t, "<result>NOT_INSTALLED</result>\n", res.stdout, "never provisioned: a state")
		r.provisioned()
		res = r.runScript(ea, r.env())
		assert.Equal(t, "<result>OK</result>\n", res.stdout)
		assert.Equal(t, []string{"verify", "--timeout", "30s"}, r.lastCall())

		current := r.withSettings("jamf/extension-attribute-verify.sh", map[string]string{"min_version": "1.5.0"})
		res = r.runScript(current, r.env())
		assert.Equal(t, "<result>OK</result>\n", res.stdout)
		newer := r.withSettings("jamf/extension-attribute-verify.sh", map[string]string{"min_version": "1.6.0"})
		res = r.runScript(newer, r.env())
		assert.Equal(t, "<result>CTRLD_VERSION_UNSUPPORTED</result>\n", res.stdout, "healthy but older: the Smart Group picks it up")

		r.script(standin.Script{Status: standin.Action{Exit: 1}})
		res = r.runScript(ea, r.env())
		assert.Equal(t, "<result>SERVICE_NOT_RUNNING</result>\n", res.stdout)
		r.assertCtrldNeverStarted()
	})
}

// assertOwnFilesGone checks that ctrld-install's own files are gone.
func (r *rig) assertOwnFilesGone() {
	r.t.Helper()
	assert.NoFileExists(r.t, r.wrapper, "the binary")
	assert.NoFileExists(r.t, r.logFile, "the log")
	entries, _ := os.ReadDir(r.home)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	assert.NoDirExists(r.t, r.home, "the record, the lock and, empty, the home; left: %v", left)
}

// assertUninstalledWith checks the one ctrld uninstall run: the PIN as
// --pin N, --cleanup when asked, nothing else.
func (r *rig) assertUninstalledWith(pin string, cleanup bool) {
	r.t.Helper()
	calls := r.uninstallCalls()
	require.Len(r.t, calls, 1)
	got := calls[0]
	require.NotEmpty(r.t, got)
	assert.Equal(r.t, "uninstall", got[0])
	want := []string{}
	if pin != "" {
		i := indexOf(got, "--pin")
		if assert.True(r.t, i > 0 && i+1 < len(got), "--pin N in %v", got) {
			assert.Equal(r.t, pin, got[i+1], "the PIN reaches ctrld")
		}
		want = append(want, "--pin", pin)
	}
	if cleanup {
		want = append(want, "--cleanup")
	}
	assert.ElementsMatch(r.t, want, got[1:])
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func TestScriptsJamfUninstall(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		r.provisioned()
		r.script(standin.Script{Uninstall: r.uninstalls()})
		res := r.jamf("jamf/uninstall.sh", r.env(), canaryPIN, "timeout=2m", "cleanup=yes", "", "", "", "", "")
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		lines := strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n")
		assert.Equal(t, "ctrld-install: uninstall succeeded (exit 0)", lastLine(lines))
		assert.Equal(t, [][]string{{"uninstall", "--log", r.logFile, "--timeout", "2m", "--cleanup", "--pin-stdin"}}, r.installerCalls())
		r.assertUninstalledWith(canaryPIN, true)
		r.assertOwnFilesGone()
		r.assertSecretContained(res, "")
		assert.NoFileExists(t, r.serviceFile)

		// Nothing installed: nothing to do, and nothing of ctrld-install left.
		r.writeWrapper()
		res = r.jamf("jamf/uninstall.sh", r.env())
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.True(t, strings.HasSuffix(res.stdout, "ctrld-install: not installed, nothing to do (exit 0)\n"), res.stdout)
		assert.Equal(t, []string{"uninstall", "--log", r.logFile}, r.lastCall())
		r.assertOwnFilesGone()
	})
}

func TestScriptsJamfUninstallPinRequired(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		r.provisioned()
		r.script(standin.Script{Uninstall: standin.Action{
			Stdout: []string{"Apr  3 15:51:23.000 ERR deactivation pin is required to stop or uninstall the service"}, Exit: 126}})
		res := r.jamf("jamf/uninstall.sh", r.env())
		assert.Equal(t, 126, res.exit, "the policy fails: ctrld is still there")
		assert.Contains(t, res.stdout, "ctrld-install: uninstall failed: stage=service code=DEACTIVATION_PIN_REQUIRED (exit 126)")
		assert.FileExists(t, r.wrapper, "kept for the diagnosis")
		assert.FileExists(t, r.logFile)
		assert.FileExists(t, r.serviceFile)
		r.assertSecretContained(res, "")
	})
}

func TestScriptsJamfUninstallUsageErrors(t *testing.T) {
	fullE2E(t)
	for _, tc := range []struct {
		name     string
		params   []string
		sentence string
	}{
		{"PIN not digits", []string{canaryLower}, "parameter 4 (the deactivation PIN) must be digits only"},
		{"unknown key", []string{"", "force=yes"}, "parameter 5 has the unknown key force=; the keys are timeout=, cleanup="},
		{"a key with a space", []string{"", "timeout cleanup=yes"}, "parameter 5 has an unknown key; the keys are timeout=, cleanup="},
		{"bad cleanup", []string{"", "cleanup=" + canaryToken}, "cleanup= in parameter 5 must be yes or no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachShell(t, func(t *testing.T, r *rig) {
				res := r.jamf("jamf/uninstall.sh", r.env(), tc.params...)
				r.assertUsageError(res, uninstallUsageLine, 61, tc.sentence)
				assert.FileExists(t, r.wrapper)
			})
		})
	}
}

// FileWave's script is a Requirements script: 0 provisioned, 210 nothing to
// do ("Success (Skipped Install)"), 220 fatal ("Will Not Retry"), anything
// else retried after two minutes.
func TestScriptsFileWave(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		// The fileset puts provision_token beside the script.
		dir := filepath.Join(r.dir, "fileset")
		require.NoError(t, os.MkdirAll(dir, 0o700))
		src, err := os.ReadFile(scriptPath(t, "filewave/install.sh"))
		require.NoError(t, err)
		script := filepath.Join(dir, "install.sh")
		require.NoError(t, os.WriteFile(script, src, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "provision_token"), []byte(canaryToken+"\n"), 0o600))

		r.script(standin.Script{Start: identifierFailure(codes.ListenerBindFailed)})
		res := r.runScript(script, r.env())
		assert.Equal(t, 220, res.exit, "fatal: FileWave must not retry")
		assert.Contains(t, r.assertInstallerLines(res), failureLine(codes.ListenerBindFailed), "the code keeps its own number in the lines")
		assert.Equal(t, [][]string{{"--exit-profile", "filewave", "--log", r.logFile, "--token-file", filepath.Join(dir, "provision_token")}}, r.installerCalls())
		r.assertSecretContained(res, canaryToken)

		r.script(standin.Script{Start: r.world.success()})
		res = r.runScript(script, r.env())
		assert.Equal(t, 0, res.exit)
		r.assertSecretContained(res, canaryToken)

		// Evaluated again, healthy: "Success (Skipped Install)", not an error.
		res = r.runScript(script, r.env())
		assert.Equal(t, 210, res.exit)
		assert.Equal(t, "ctrld-install: already provisioned, nothing to do (exit 0)\n", res.stdout)
		assert.Len(t, r.argv(), 2, "the skipped run did not start ctrld")

		// The token from the script's environment variables instead, and a
		// forced run after the token changed.
		require.NoError(t, os.Remove(filepath.Join(dir, "provision_token")))
		res = r.runScript(script, r.env("CTRLD_PROVISION_TOKEN="+canaryToken, "CTRLD_INSTALL_FORCE=yes", "CTRLD_INSTALL_TIMEOUT=4m"))
		assert.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, []string{"--exit-profile", "filewave", "--log", r.logFile, "--timeout", "4m", "--force", "--token-stdin"}, r.lastCall())
		assert.Len(t, r.argv(), 3)
		r.assertSecretContained(res, canaryToken)

		// A setting not understood, or no token: fatal, not retried.
		res = r.runScript(script, r.env("CTRLD_PROVISION_TOKEN="+canaryToken, "CTRLD_INSTALL_RETRIES="+canaryLower))
		r.assertUsageError(res, usageLine, 220, "CTRLD_INSTALL_RETRIES needs a whole number such as 2")
		res = r.runScript(script, r.env())
		r.assertUsageError(res, usageLine, 220, "no token: put provision_token beside the script or set CTRLD_PROVISION_TOKEN in its environment variables")

		// The binaries' fileset has not arrived yet: retried in 2 minutes.
		res = r.runScript(script, r.env("CTRLD_PROVISION_TOKEN="+canaryToken, "CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing")))
		assert.Equal(t, 60, res.exit)
		assert.Regexp(t, scriptError("filewave"), res.stderr)
	})
}

func TestScriptsRMM(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		res := r.runScript(scriptPath(t, "rmm/install.sh"), r.env("CTRLD_PROVISION_TOKEN="+canaryToken,
			"CTRLD_START_FLAGS= --custom-hostname  host-1 ", "CTRLD_INSTALL_TIMEOUT=4m", "CTRLD_INSTALL_MIN_VERSION=v1.4.0"))
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		lines := r.assertInstallerLines(res)
		assert.Equal(t, "ctrld-install: provisioning succeeded (exit 0)", lastLine(lines))
		assert.Regexp(t, `time left [34]m`, lines[1], "the budget is the one given")
		assert.Equal(t, [][]string{{"--exit-profile", "jamf", "--log", r.logFile, "--timeout", "4m", "--min-version", "v1.4.0", "--token-stdin",
			"--", "--custom-hostname", "host-1"}}, r.installerCalls())
		assert.Equal(t, []string{"start", "--cd-org", canaryToken, "--custom-hostname", "host-1"}, r.argv()[0].Argv[1:])
		r.assertSecretContained(res, canaryToken)

		// The RMM's next scheduled run leaves the healthy machine alone...
		res = r.runScript(scriptPath(t, "rmm/install.sh"), r.env("CTRLD_PROVISION_TOKEN="+canaryToken))
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, "ctrld-install: already provisioned, nothing to do (exit 0)\n", res.stdout)
		assert.Len(t, r.argv(), 1, "ctrld start ran once")
		r.assertSecretContained(res, canaryToken)

		// ...unless told to apply a changed token.
		res = r.runScript(scriptPath(t, "rmm/install.sh"), r.env("CTRLD_PROVISION_TOKEN="+canaryToken, "CTRLD_INSTALL_FORCE=yes",
			"CTRLD_INSTALL_RETRIES=0", "CTRLD_INSTALL_EXIT_PROFILE=intune"))
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, []string{"--exit-profile", "intune", "--log", r.logFile, "--retries", "0", "--force", "--token-stdin"}, r.lastCall())
		assert.Len(t, r.argv(), 2)
		r.assertSecretContained(res, canaryToken)
	})
}

func TestScriptsRMMUsageErrors(t *testing.T) {
	fullE2E(t)
	for _, tc := range []struct {
		name     string
		env      []string
		sentence string
	}{
		{"token and resolver", []string{"CTRLD_PROVISION_TOKEN=" + canaryToken, "CTRLD_PROVISION_RESOLVER=" + canaryResolver},
			"CTRLD_PROVISION_TOKEN and CTRLD_PROVISION_RESOLVER exclude each other; set one of them"},
		{"two-line token", []string{"CTRLD_PROVISION_TOKEN=" + canaryToken + "\nx"}, "CTRLD_PROVISION_TOKEN holds more than one line"},
		{"timeout", []string{"CTRLD_PROVISION_TOKEN=" + canaryToken, "CTRLD_INSTALL_TIMEOUT=" + canaryToken}, "CTRLD_INSTALL_TIMEOUT needs a duration such as 90s or 10m"},
		{"force", []string{"CTRLD_PROVISION_TOKEN=" + canaryToken, "CTRLD_INSTALL_FORCE=sure"}, "CTRLD_INSTALL_FORCE must be yes or no"},
		{"version", []string{"CTRLD_PROVISION_TOKEN=" + canaryToken, "CTRLD_INSTALL_MIN_VERSION=1.5;x"}, "CTRLD_INSTALL_MIN_VERSION needs a version such as 1.5.0"},
		{"profile", []string{"CTRLD_PROVISION_TOKEN=" + canaryToken, "CTRLD_INSTALL_EXIT_PROFILE=kandji"}, "CTRLD_INSTALL_EXIT_PROFILE must be one of default, intune, filewave, jamf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			forEachShell(t, func(t *testing.T, r *rig) {
				res := r.runScript(scriptPath(t, "rmm/install.sh"), r.env(tc.env...))
				r.assertUsageError(res, usageLine, 61, tc.sentence)
			})
		})
	}
	t.Run("missing binary", func(t *testing.T) {
		forEachShell(t, func(t *testing.T, r *rig) {
			res := r.runScript(scriptPath(t, "rmm/install.sh"), r.env("CTRLD_PROVISION_TOKEN="+canaryToken, "CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing")))
			assert.Equal(t, 60, res.exit)
			assert.Regexp(t, scriptError("rmm"), res.stderr)
			assert.NotContains(t, res.stderr, canaryToken)
		})
	})
}

// The daily job runs without a token: it repairs a stopped service, never
// provisions, and a device with nothing installed is ctrld-install's own
// usage error (the device needs the job with the token), not the script's.
func TestScriptsRMMRepairWithoutToken(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		script := scriptPath(t, "rmm/install.sh")
		r.provisioned()
		running := filepath.Join(r.dir, "running")
		r.script(standin.Script{Status: standin.Action{NeedFile: running}, Restart: standin.Action{WriteFiles: map[string]string{running: "1"}}})
		res := r.runScript(script, r.env())
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "ctrld-install: repair applied, ctrld restarted (exit 0)", lastLine(r.assertInstallerLines(res)))
		assert.Equal(t, [][]string{{"--exit-profile", "jamf", "--log", r.logFile}}, r.installerCalls(), "no secret flag")
		r.assertCtrldNeverStarted()
		r.assertSecretContained(res, "")

		// Healthy now: the next day's run does nothing.
		res = r.runScript(script, r.env())
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, "ctrld-install: already provisioned, nothing to do (exit 0)\n", res.stdout)
		r.assertCtrldNeverStarted()

		// Nothing installed: nothing to repair, and nothing provisioned.
		require.NoError(t, os.Remove(r.serviceFile))
		res = r.runScript(script, r.env())
		assert.Equal(t, 61, res.exit)
		assert.Equal(t, usageLine, lastLine(r.assertInstallerLines(res)))
		assert.Contains(t, res.stderr, "ctrld-install: error: no token given")
		assert.Len(t, r.installerCalls(), 3, "ctrld-install said it, not the script")
		r.assertCtrldNeverStarted()
	})
}

func TestScriptsRMMResolver(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		res := r.runScript(scriptPath(t, "rmm/install.sh"), r.env("CTRLD_PROVISION_RESOLVER="+canaryResolver))
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, []string{"--exit-profile", "jamf", "--log", r.logFile, "--resolver-stdin"}, r.lastCall())
		r.assertSecretContained(res, canaryResolver)
	})
}

// A device managed under another deactivation PIN is settled: the daily
// job does not fail on it, and the last line still names the code, with
// the next step before it.
func TestScriptsRMMAlreadyManaged(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		r.script(standin.Script{Start: standin.Action{Exit: 126}})
		res := r.runScript(scriptPath(t, "rmm/install.sh"), r.env("CTRLD_PROVISION_TOKEN="+canaryToken))
		assert.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		lines := r.assertInstallerLines(res)
		assert.Equal(t, failureLine(codes.DeactivationPinRequired), lastLine(lines))
		assert.True(t, strings.HasPrefix(lines[len(lines)-2], "ctrld-install: next step: "), lines[len(lines)-2])
		assert.Equal(t, codes.DeactivationPinRequired, r.record().Code)
		r.assertSecretContained(res, canaryToken)

		// The admin can still ask for the code's own number.
		res = r.runScript(scriptPath(t, "rmm/install.sh"), r.env("CTRLD_PROVISION_TOKEN="+canaryToken, "CTRLD_INSTALL_EXIT_PROFILE=default"))
		assert.Equal(t, 126, res.exit)
	})
}

func TestScriptsRMMUninstall(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		r.provisioned()
		r.script(standin.Script{Uninstall: r.uninstalls()})
		res := r.runScript(scriptPath(t, "rmm/uninstall.sh"), r.env("CTRLD_DEACTIVATION_PIN="+canaryPIN, "CTRLD_UNINSTALL_CLEANUP=yes"))
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.True(t, strings.HasSuffix(res.stdout, "ctrld-install: uninstall succeeded (exit 0)\n"), res.stdout)
		assert.Equal(t, [][]string{{"uninstall", "--log", r.logFile, "--cleanup", "--pin-stdin"}}, r.installerCalls())
		r.assertUninstalledWith(canaryPIN, true)
		r.assertOwnFilesGone()
		r.assertSecretContained(res, "")

		// ctrld stays (ctrld 1.5.0 exits 0 when it cannot reach its service).
		r.writeWrapper()
		r.provisioned()
		r.script(standin.Script{Uninstall: standin.Action{Stdout: []string{"ERR could not reach the service"}}})
		res = r.runScript(scriptPath(t, "rmm/uninstall.sh"), r.env())
		assert.Equal(t, 56, res.exit)
		assert.Contains(t, res.stdout, "ctrld-install: uninstall failed: stage=service code=SERVICE_UNINSTALL_FAILED (exit 56)")
		assert.FileExists(t, r.wrapper, "kept for the diagnosis")
	})
}

func TestScriptsRMMUninstallUsageErrors(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		res := r.runScript(scriptPath(t, "rmm/uninstall.sh"), r.env("CTRLD_DEACTIVATION_PIN="+canaryToken))
		r.assertUsageError(res, uninstallUsageLine, 61, "CTRLD_DEACTIVATION_PIN must be digits only")
		res = r.runScript(scriptPath(t, "rmm/uninstall.sh"), r.env("CTRLD_UNINSTALL_CLEANUP=please"))
		r.assertUsageError(res, uninstallUsageLine, 61, "CTRLD_UNINSTALL_CLEANUP must be yes or no")
		// No ctrld-install and nothing installed: nothing to do, not 60.
		res = r.runScript(scriptPath(t, "rmm/uninstall.sh"), r.env("CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing")))
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, "ctrld-install: not installed, nothing to do (exit 0)\n", res.stdout)
	})
}

func TestScriptsKandjiAudit(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		res := r.runScript(scriptPath(t, "kandji/audit.sh"), r.env("CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing")))
		assert.Equal(t, 1, res.exit)
		assert.Equal(t, "ctrld-install-kandji: not installed: no ctrld-install at "+filepath.Join(r.dir, "missing")+"; the package will be installed\n", res.stdout)
	})
}

func TestScriptsKandjiAuditVerify(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		audit := scriptPath(t, "kandji/audit.sh")
		res := r.runScript(audit, r.env())
		assert.Equal(t, 54, res.exit)
		assert.Equal(t, "ctrld-install: not installed (exit 54)\n", res.stdout, "never provisioned: a state, not a failure line")
		assert.Equal(t, [][]string{{"verify"}}, r.installerCalls())

		r.provisioned()
		res = r.runScript(audit, r.env())
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, "ctrld-install: verify succeeded (exit 0)\n", res.stdout)

		newer := r.withSettings("kandji/audit.sh", map[string]string{"min_version": "1.6.0"})
		res = r.runScript(newer, r.env())
		assert.Equal(t, codes.Must(codes.CtrldVersionUnsupported).Exit, res.exit, "older than the package: install it")
		assert.Contains(t, res.stdout, "code=CTRLD_VERSION_UNSUPPORTED (exit 67)")
		assert.Equal(t, []string{"verify", "--min-version", "1.6.0"}, r.lastCall())

		r.script(standin.Script{Status: standin.Action{Exit: 1}})
		res = r.runScript(audit, r.env())
		assert.Equal(t, codes.Must(codes.ServiceNotRunning).Exit, res.exit)
		r.assertCtrldNeverStarted()
	})
}

func TestScriptsMunkiInstallcheck(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		res := r.runScript(scriptPath(t, "munki/installcheck.sh"), r.env("CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing")))
		assert.Equal(t, 0, res.exit, "no ctrld-install: install needed")
		assert.Contains(t, res.stdout, "not installed")
	})
}

func TestScriptsMunkiInstallcheckVerify(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		check := scriptPath(t, "munki/installcheck.sh")
		res := r.runScript(check, r.env())
		assert.Equal(t, 0, res.exit, "never provisioned: install needed")
		assert.Equal(t, "ctrld-install: not installed (exit 54)\n", res.stdout)
		r.provisioned()
		res = r.runScript(check, r.env())
		assert.Equal(t, 1, res.exit, "healthy: installed")
		newer := r.withSettings("munki/installcheck.sh", map[string]string{"min_version": "1.6.0"})
		res = r.runScript(newer, r.env())
		assert.Equal(t, 0, res.exit, "healthy but older than the package: install needed")
		assert.Equal(t, []string{"verify", "--min-version", "1.6.0"}, r.lastCall())
		r.assertCtrldNeverStarted()
	})
}

func TestScriptsMunkiUninstall(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		// The uninstallcheck answers from the disk: removal is needed while
		// ctrld-install is there.
		res := r.runScript(scriptPath(t, "munki/uninstallcheck.sh"), r.env())
		assert.Equal(t, 0, res.exit, "uninstall needed")
		res = r.runScript(scriptPath(t, "munki/uninstallcheck.sh"), r.env("CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing")))
		assert.Equal(t, 1, res.exit, "nothing to remove")

		bad := r.withSettings("munki/uninstall.sh", map[string]string{"deactivation_pin": canaryLower})
		res = r.runScript(bad, r.env())
		r.assertUsageError(res, uninstallUsageLine, 61, "deactivation_pin (at the top of the script) must be digits only")
	})
}

func TestScriptsMunkiUninstallRemoves(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		r.provisioned()
		r.script(standin.Script{Uninstall: r.uninstalls()})
		script := r.withSettings("munki/uninstall.sh", map[string]string{"deactivation_pin": canaryPIN, "time_limit": "2m"})
		res := r.runScript(script, r.env())
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, [][]string{{"uninstall", "--log", r.logFile, "--timeout", "2m", "--pin-stdin"}}, r.installerCalls())
		r.assertUninstalledWith(canaryPIN, false)
		r.assertOwnFilesGone()
		r.assertSecretContained(res, "")
		res = r.runScript(scriptPath(t, "munki/uninstallcheck.sh"), r.env())
		assert.Equal(t, 1, res.exit, "removed")
	})
}

// The blocks pasted into several scripts (MDM tools upload one file, so
// there is nothing to source) must not drift apart, and every script that
// runs ctrld-install with a secret has the one that hands it over.
func TestScriptsShareBlocks(t *testing.T) {
	t.Parallel()
	for _, b := range []struct {
		name    string
		scripts []string
	}{
		{"signals and the secret", []string{"pkg/postinstall", "jamf/policy.sh", "jamf/uninstall.sh",
			"filewave/install.sh", "rmm/install.sh", "rmm/uninstall.sh", "munki/uninstall.sh"}},
		{"settings", []string{"pkg/postinstall", "jamf/policy.sh", "jamf/uninstall.sh",
			"filewave/install.sh", "rmm/install.sh", "rmm/uninstall.sh", "munki/uninstall.sh"}},
		{"Jamf parameters", []string{"jamf/policy.sh", "jamf/uninstall.sh"}},
		{"own files", []string{"jamf/uninstall.sh", "rmm/uninstall.sh", "munki/uninstall.sh"}},
		{"verify word", []string{"jamf/extension-attribute-verify.sh", "intune/custom-attribute-macos.sh"}},
		{"ctrld without ctrld-install", []string{"jamf/uninstall.sh", "rmm/uninstall.sh", "munki/uninstall.sh"}},
	} {
		block := regexp.MustCompile(`(?s)# --- ` + regexp.QuoteMeta(b.name) + `:.*?# --- end of the ` + regexp.QuoteMeta(b.name) + ` block ---\n`)
		var first, firstName string
		for _, rel := range b.scripts {
			src, err := os.ReadFile(scriptPath(t, rel))
			require.NoError(t, err)
			m := block.FindAllString(string(src), -1)
			require.Len(t, m, 1, "%s has the %s block once", rel, b.name)
			if first == "" {
				first, firstName = m[0], rel
				continue
			}
			assert.Equal(t, first, m[0], "%s's %s block differs from %s's", rel, b.name, firstName)
		}
	}
}

// The uninstall scripts delete ctrld-install's own files by name; the names
// must be the ones the code uses.
func TestScriptsUninstallKnowTheOwnFiles(t *testing.T) {
	t.Parallel()
	for _, rel := range []string{"jamf/uninstall.sh", "rmm/uninstall.sh", "munki/uninstall.sh", "intune/uninstall.ps1", "rmm/uninstall.ps1"} {
		src, err := os.ReadFile(scriptPath(t, rel))
		require.NoError(t, err)
		for _, name := range []string{record.FileName, lock.FileName, lock.WitnessName} {
			assert.Contains(t, string(src), name, "%s deletes %s", rel, name)
		}
	}
}

// No script writes a secret to a file any more: none makes a temporary
// file, and every variable secret goes to a --*-stdin flag.
func TestScriptsWriteNoSecretFile(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(scriptsDir)
	require.NoError(t, err)
	require.NoError(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, p)
		// The package builders run on a build machine and stage under a
		// private temporary directory; the rest run on devices.
		if fi.IsDir() || !strings.Contains(filepath.ToSlash(rel), "/") || strings.HasPrefix(filepath.Base(rel), "build-") {
			return nil
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		assert.NotContains(t, string(b), "mktemp", rel)
		assert.NotContains(t, string(b), "New-TemporaryFile", rel)
		assert.NotContains(t, string(b), "GetTempFileName", rel)
		assert.NotContains(t, string(b), "SilentlyContinue", "%s: a failure must be seen", rel)
		return nil
	}))
}

// shellScripts lists the shell scripts in the tools' directories.
func shellScripts(t *testing.T) []string {
	root, err := filepath.Abs(scriptsDir)
	require.NoError(t, err)
	var out []string
	require.NoError(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		require.NoError(t, err)
		if fi.IsDir() || strings.HasSuffix(p, ".ps1") || strings.HasSuffix(p, ".md") {
			return nil
		}
		// Ready files (Jamf XML, profiles, pkginfo) are not scripts: a
		// script starts with #!.
		if b, err := os.ReadFile(p); err != nil || !bytes.HasPrefix(b, []byte("#!")) {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if !strings.Contains(filepath.ToSlash(rel), "/") {
			return nil // scripts/ itself holds build tooling, not MDM scripts
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	}))
	return out
}

// Every shell script in a tool's directory under scripts/ is run by a test
// in this file.
func TestScriptsAllCovered(t *testing.T) {
	t.Parallel()
	covered := map[string]bool{
		"pkg/postinstall": true, "pkg/build-pkg.sh": true,
		"jamf/policy.sh": true, "jamf/uninstall.sh": true, "jamf/extension-attribute.sh": true, "jamf/extension-attribute-verify.sh": true,
		"intune/install-macos.sh": true, "intune/custom-attribute-macos.sh": true, "filewave/install.sh": true, "filewave/repair.sh": true, "rmm/install.sh": true, "rmm/uninstall.sh": true,
		"kandji/audit.sh": true, "munki/installcheck.sh": true, "munki/uninstallcheck.sh": true, "munki/uninstall.sh": true,
		// The packages' scripts: run by scripts/packages_test.go.
		"pkg/uninstall-postinstall.sh": true, "deb/build-deb.sh": true, "deb/postinst.sh": true, "deb/prerm.sh": true, "deb/postrm.sh": true,
		"msi/build-msi.sh": true,
	}
	root, err := filepath.Abs(scriptsDir)
	require.NoError(t, err)
	for _, rel := range shellScripts(t) {
		assert.True(t, covered[rel], "%s has no test", rel)
		fi, err := os.Stat(filepath.Join(root, rel))
		require.NoError(t, err)
		assert.NotZero(t, fi.Mode().Perm()&0o111, "%s is executable", rel)
	}
}

// The daily policy leaves parameter 4 empty: no token, so only a repair or
// an upgrade can happen, and a Mac that needs provisioning is a usage error
// from ctrld-install itself.
func TestScriptsJamfPolicyDailyWithoutToken(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		res := r.jamf("jamf/policy.sh", r.env(), canaryToken, "")
		require.Equal(t, 0, res.exit)

		running := filepath.Join(r.dir, "running")
		r.script(standin.Script{Status: standin.Action{NeedFile: running}, Restart: standin.Action{WriteFiles: map[string]string{running: "1"}}})
		// An exported token never stands in for parameter 4.
		res = r.jamf("jamf/policy.sh", r.env("CTRLD_PROVISION_TOKEN="+canaryToken), "", "", "exit-profile=jamf", "", "", "", "", "")
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "ctrld-install: repair applied, ctrld restarted (exit 0)", lastLine(r.assertInstallerLines(res)))
		assert.Equal(t, []string{"--exit-profile", "jamf", "--log", r.logFile}, r.lastCall())
		assert.Len(t, r.argv(), 1, "no ctrld start")
		r.assertSecretContained(res, "")

		require.NoError(t, os.Remove(r.serviceFile))
		res = r.jamf("jamf/policy.sh", r.env(), "", "")
		assert.Equal(t, 61, res.exit)
		assert.Equal(t, usageLine, lastLine(r.assertInstallerLines(res)))
		assert.Len(t, r.installerCalls(), 3, "ctrld-install said it, not the script")
	})
}
