//go:build unix

package main

// The MDM and RMM scripts under scripts/, run with real shells against the
// built ctrld-install and the fake ctrld.
//
// Three recorders prove where the token goes:
//   - ctrld-install is reached through a wrapper that records its argv (and
//     the mode of the token file while it exists) before it execs the built
//     binary with the test's home, service file and fake ctrld;
//   - every command a script runs through PATH goes through a shim that
//     records its argv before it execs the real command;
//   - the fake ctrld records its own argv, the one place the token belongs.
// Shell builtins (printf writes the token file) start no process and so have
// no argv to leak from.

import (
	"bytes"
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
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// scriptsDir is the repository's scripts/ directory.
var scriptsDir = filepath.Join("..", "..", "scripts")

func scriptPath(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(scriptsDir, rel))
	require.NoError(t, err)
	require.FileExists(t, p)
	return p
}

// shells are the POSIX shells every script must work in: the scripts say
// #!/bin/sh, which is bash on macOS and dash here.
func shells(t *testing.T) []string {
	var out []string
	for _, s := range []string{"dash", "bash"} {
		if p, err := exec.LookPath(s); err == nil {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Skip("no dash or bash")
	}
	return out
}

// forEachShell runs f once per shell, each with a fresh rig.
func forEachShell(t *testing.T, f func(t *testing.T, r *rig)) {
	for _, sh := range shells(t) {
		t.Run(filepath.Base(sh), func(t *testing.T) {
			f(t, newRig(t, sh))
		})
	}
}

// rig is a world plus the recorders and the paths the scripts are pointed at.
type rig struct {
	*world
	shell     string
	wrapper   string // the ctrld-install scripts run
	wrapLog   string // one line per ctrld-install run: its arguments, \x1f-separated
	modeLog   string // ls -ld of the token file and its directory, while ctrld-install runs
	execLog   string // one line per command run through PATH
	statusLog string // the fake's record of ctrld status runs
	shimDir   string
	tmp       string // TMPDIR for the scripts: must be empty after every run
}

func newRig(t *testing.T, shell string) *rig {
	t.Helper()
	w := newWorld(t)
	r := &rig{
		world:     w,
		shell:     shell,
		wrapper:   filepath.Join(w.dir, "wrap", "ctrld-install"),
		wrapLog:   filepath.Join(w.dir, "wrap-argv.log"),
		modeLog:   filepath.Join(w.dir, "token-modes.log"),
		execLog:   filepath.Join(w.dir, "exec.log"),
		statusLog: filepath.Join(w.dir, "status-argv.jsonl"),
		shimDir:   filepath.Join(w.dir, "shims"),
		tmp:       filepath.Join(w.dir, "tmp"),
	}
	require.NoError(t, os.MkdirAll(r.tmp, 0o755))
	r.writeShims()
	r.writeWrapper(w.fake)
	r.script(standin.Script{Start: w.success()})
	return r
}

// script sets the fake's behaviour, recording status runs too.
func (r *rig) script(s standin.Script) {
	if s.Status.Record == "" {
		s.Status.Record = r.statusLog
	}
	r.world.script(s)
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// writeWrapper writes the ctrld-install the scripts run. The scripts never
// pass --home or --service-file, so the wrapper's come first and stand; a
// --ctrld from the script (the postinstall passes the package's) wins over
// the wrapper's, which is pflag's last-one-wins.
func (r *rig) writeWrapper(fake string) {
	r.t.Helper()
	require.NoError(r.t, os.MkdirAll(filepath.Dir(r.wrapper), 0o755))
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
prev=
for a in "$@"; do
	if [ "$prev" = --token-file ]; then
		ls -ld "$a" "${a%%/*}" >>%[2]s 2>&1
	fi
	prev=$a
done
case $1 in
status) shift; exec %[3]s status --home %[4]s "$@" ;;
verify) shift; exec %[3]s verify --ctrld %[5]s --service-file %[6]s "$@" ;;
*) exec %[3]s --ctrld %[5]s --home %[4]s --service-file %[6]s "$@" ;;
esac
`, shQuote(r.wrapLog), shQuote(r.modeLog), shQuote(installerBin), shQuote(r.home), shQuote(fake), shQuote(r.serviceFile))
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

// writeShims puts a recording shim in front of every command in the system
// directories, so any process a script starts through PATH is seen.
func (r *rig) writeShims() {
	r.t.Helper()
	require.NoError(r.t, os.MkdirAll(r.shimDir, 0o755))
	target := filepath.Join(r.shimDir, ".shim")
	require.NoError(r.t, os.WriteFile(target, []byte(shim), 0o755))
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
			require.NoError(r.t, os.Symlink(target, filepath.Join(r.shimDir, n)))
		}
	}
	require.True(r.t, seen["mktemp"] && seen["rm"], "the shims must cover the commands the scripts use")
}

// env is the environment a script runs with: the overrides the scripts
// document, the recorders, and extra.
func (r *rig) env(extra ...string) []string {
	env := append(cleanEnv(),
		"PATH="+r.shimDir+":"+os.Getenv("PATH"),
		"TMPDIR="+r.tmp,
		"CTRLD_INSTALL_BIN="+r.wrapper,
		"CTRLD_INSTALL_LOG="+r.logFile,
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

// assertTokenContained checks that the token went to ctrld's argv and
// nowhere else: not on ctrld-install's argv or any other command's, not in
// any output, the log or the record, not in ctrld's environment, and that
// no token file is left behind.
func (r *rig) assertTokenContained(res result) {
	r.t.Helper()
	r.assertNoCanary(res)
	for name, p := range map[string]string{"ctrld-install's argv": r.wrapLog, "a command's argv": r.execLog,
		"the token file listing": r.modeLog, "ctrld status's argv": r.statusLog} {
		b, _ := os.ReadFile(p)
		assert.NotContains(r.t, string(b), canaryToken, "the token is on %s", name)
	}
	if _, err := os.Stat(r.argvFile); err == nil {
		for _, c := range r.argv() {
			assert.Contains(r.t, c.Argv, canaryToken, "ctrld start gets the token")
			for _, kv := range c.Env {
				assert.NotContains(r.t, kv, canaryToken, "the token is in ctrld's environment")
			}
		}
	}
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
	assert.Empty(r.t, names, "the token file and its directory must be removed")
}

// assertPrivateTokenFile checks the modes the wrapper saw while ctrld-install
// ran: a 0600 file in a 0700 directory under TMPDIR.
func (r *rig) assertPrivateTokenFile(tokenFile string) {
	r.t.Helper()
	assert.True(r.t, strings.HasPrefix(tokenFile, r.tmp+string(filepath.Separator)), "the token file is under TMPDIR: %s", tokenFile)
	b, err := os.ReadFile(r.modeLog)
	require.NoError(r.t, err)
	modes := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if i := strings.LastIndexByte(l, ' '); i >= 0 {
			modes[l[i+1:]], _, _ = strings.Cut(l, " ")
		}
	}
	assert.Equal(r.t, "-rw-------", modes[tokenFile], "token file mode")
	assert.Equal(r.t, "drwx------", modes[filepath.Dir(tokenFile)], "token directory mode")
}

// assertInstallerLines checks that stdout is exactly ctrld-install's lines:
// the same lines, in order, as it appended to the log.
func (r *rig) assertInstallerLines(res result) []string {
	r.t.Helper()
	out := strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n")
	require.NotEmpty(r.t, res.stdout)
	// The log has stderr's lines too, in the order written.
	errLines := map[string]bool{}
	for _, l := range strings.Split(res.stderr, "\n") {
		errLines[l] = true
	}
	var logged []string
	for _, l := range strings.Split(strings.TrimSuffix(r.log(), "\n"), "\n") {
		_, rest, ok := strings.Cut(l, " ")
		require.True(r.t, ok, l)
		// Each run's header is written to the log alone.
		if !errLines[rest] && !strings.HasPrefix(rest, "ctrld-install: run started: ") {
			logged = append(logged, rest)
		}
	}
	assert.Equal(r.t, logged, out, "stdout is exactly ctrld-install's lines")
	for _, l := range out {
		assert.True(r.t, strings.HasPrefix(l, "ctrld-install: "), l)
	}
	return out
}

func lastLine(lines []string) string { return lines[len(lines)-1] }

func failureLine(name string) string {
	c := codes.Must(name)
	return fmt.Sprintf("ctrld-install: provisioning failed: stage=%s code=%s (exit %d)", c.Stage, c.Name, c.Exit)
}

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

func (r *rig) writeToken(name string) string {
	p := filepath.Join(r.dir, name)
	require.NoError(r.t, os.WriteFile(p, []byte(canaryToken+"\n"), 0o600))
	return p
}

func TestScriptsBuildPkgStaging(t *testing.T) {
	r := newRig(t, shells(t)[0])
	tok := r.writeToken("org-token")
	stage := filepath.Join(r.dir, "stage")
	res := r.runScript(scriptPath(t, "pkg/build-pkg.sh"), r.env(),
		"--stage-only", stage, "--ctrld", r.fake, "--ctrld-install", r.wrapper, "--version", "1.5.0", "--token-file", tok)
	require.Equal(t, 0, res.exit, res.stderr)
	assert.Equal(t, "ctrld-install-build-pkg: staged in "+stage+"\n", res.stdout)
	assert.Empty(t, res.stderr)

	var files []string
	require.NoError(t, filepath.Walk(stage, func(p string, fi os.FileInfo, err error) error {
		require.NoError(t, err)
		if !fi.IsDir() {
			rel, _ := filepath.Rel(stage, p)
			files = append(files, fmt.Sprintf("%s %o", rel, fi.Mode().Perm()))
		}
		return nil
	}))
	assert.ElementsMatch(t, []string{
		"root/usr/local/bin/ctrld 755",
		"root/usr/local/bin/ctrld-install 755",
		"scripts/postinstall 755",
		"scripts/provision_token 600",
	}, files)
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
			"--version", "1", "--token-file", tok, "--payload-only"}, "--token-file and --payload-only exclude each other"},
		{"unknown argument", []string{"--bogus"}, "an unknown argument was given"},
		{"a token given as an argument is not repeated", []string{"--token=" + canaryToken}, "an unknown argument was given"},
		{"a missing binary is not named", []string{"--stage-only", filepath.Join(r.dir, "x"), "--ctrld", filepath.Join(r.dir, canaryToken),
			"--ctrld-install", r.wrapper, "--version", "1"}, "the --ctrld file does not exist"},
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
			assert.NoDirExists(t, filepath.Join(r.dir, "x"))
		})
	}
}

func TestScriptsPostinstall(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		// Installer's arguments: package path, install location, target volume.
		stage := r.stagePkg("--token-file", r.writeToken("org-token"))
		postinstall := filepath.Join(stage, "scripts", "postinstall")
		res := r.runScript(postinstall, r.pkgEnv(stage), "/tmp/ctrld.pkg", "/", "/")
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		lines := r.assertInstallerLines(res)
		assert.Equal(t, "ctrld-install: provisioning succeeded (exit 0)", lastLine(lines))
		assert.Empty(t, res.stderr)
		calls := r.installerCalls()
		require.Len(t, calls, 1)
		bin := filepath.Join(stage, "root", "usr", "local", "bin")
		assert.Equal(t, []string{"--ctrld", filepath.Join(bin, "ctrld"), "--log", r.logFile,
			"--token-file", filepath.Join(stage, "scripts", "provision_token")}, calls[0],
			"the package's ctrld, the token by file")
		require.Len(t, r.argv(), 1)
		assert.Equal(t, []string{filepath.Join(bin, "ctrld"), "start", "--cd-org", canaryToken}, r.argv()[0].Argv)
		r.assertTokenContained(res)
		assert.FileExists(t, filepath.Join(stage, "scripts", "provision_token"), "the package's own token file is Installer's to remove")
	})
}

// Installer runs the script as ./postinstall from the scripts directory.
func TestScriptsPostinstallRunFromItsDirectory(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		stage := r.stagePkg("--token-file", r.writeToken("org-token"))
		require.NoError(t, os.RemoveAll(r.logFile))
		cmd := r.command("./postinstall", r.pkgEnv(stage), "/tmp/ctrld.pkg", "/", "/")
		cmd.Dir = filepath.Join(stage, "scripts")
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		require.NoError(t, cmd.Run(), "stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
		res := result{stdout: out.String(), stderr: errb.String()}
		assert.Equal(t, "ctrld-install: provisioning succeeded (exit 0)", lastLine(r.assertInstallerLines(res)))
		calls := r.installerCalls()
		require.Len(t, calls, 1)
		assert.Equal(t, filepath.Join(stage, "scripts", "provision_token"), calls[0][len(calls[0])-1], "an absolute path")
		r.assertTokenContained(res)
	})
}

func TestScriptsPostinstallTokenFromEnvironment(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		stage := r.stagePkg()
		res := r.runScript(filepath.Join(stage, "scripts", "postinstall"), r.pkgEnv(stage, "CTRLD_PROVISION_TOKEN="+canaryToken), "/tmp/ctrld.pkg", "/", "/")
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		r.assertInstallerLines(res)
		calls := r.installerCalls()
		require.Len(t, calls, 1)
		require.Len(t, calls[0], 6)
		assert.Equal(t, "--token-file", calls[0][4])
		r.assertPrivateTokenFile(calls[0][5])
		assert.True(t, r.ranCommand("mktemp") && r.ranCommand("rm"), "the shims saw the script's commands: %v", r.commands())
		r.assertTokenContained(res)
	})
}

func TestScriptsPostinstallPassesTheOutcomeThrough(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		stage := r.stagePkg("--token-file", r.writeToken("org-token"))
		r.script(standin.Script{Start: identifierFailure(codes.ListenerBindFailed)})
		res := r.runScript(filepath.Join(stage, "scripts", "postinstall"), r.pkgEnv(stage), "/tmp/ctrld.pkg", "/", "/")
		assert.Equal(t, 41, res.exit)
		lines := r.assertInstallerLines(res)
		require.GreaterOrEqual(t, len(lines), 2)
		assert.Equal(t, failureLine(codes.ListenerBindFailed), lines[len(lines)-2])
		assert.Equal(t, "ctrld-install: next step: "+codes.Must(codes.ListenerBindFailed).NextStep, lastLine(lines))
		r.assertTokenContained(res)
	})
}

func TestScriptsPostinstallRefusals(t *testing.T) {
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
		r.assertTokenContained(res)

		// No token anywhere: ctrld-install itself reports the usage error,
		// on every surface, and ctrld never starts.
		res = r.runScript(postinstall, r.pkgEnv(stage), "/tmp/ctrld.pkg", "/", "/")
		assert.Equal(t, codes.Must(codes.InstallerUsage).Exit, res.exit)
		assert.Equal(t, "ctrld-install: error: no token given: use --token, --token-file, --token-stdin, --resolver or CTRLD_PROVISION_TOKEN\n", res.stderr)
		assert.Equal(t, failureLine(codes.InstallerUsage), r.assertInstallerLines(res)[0])
		r.assertCtrldNeverStarted()

		// An incomplete package.
		res = r.runScript(postinstall, r.pkgEnv(stage, "CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing")), "/tmp/ctrld.pkg", "/", "/")
		assert.Equal(t, codes.Must(codes.InstallerFailed).Exit, res.exit)
		assert.Empty(t, res.stdout)
		assert.Regexp(t, scriptError("postinstall"), res.stderr)
		r.assertTmpEmpty()
	})
}

// An MDM agent that gives up kills the script's process group: ctrld-install
// reports INSTALLER_INTERRUPTED, the script exits with that, and the token
// file is removed.
func TestScriptsSignalRemovesTheTokenFile(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		stage := r.stagePkg()
		r.script(standin.Script{Start: standin.Action{Hang: true, Stdout: leak}})
		cmd := r.command(filepath.Join(stage, "scripts", "postinstall"), r.pkgEnv(stage, "CTRLD_PROVISION_TOKEN="+canaryToken), "/tmp/ctrld.pkg", "/", "/")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		require.NoError(t, cmd.Start())
		require.Eventually(t, func() bool {
			b, err := os.ReadFile(r.argvFile)
			return err == nil && len(b) > 0
		}, 20*time.Second, 20*time.Millisecond)
		entries, _ := os.ReadDir(r.tmp)
		assert.Len(t, entries, 1, "the token file's directory exists while ctrld-install runs")
		require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM))
		err := cmd.Wait()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		res := result{stdout: out.String(), stderr: errb.String(), exit: ee.ExitCode()}
		assert.Equal(t, codes.Must(codes.InstallerInterrupted).Exit, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		lines := r.assertInstallerLines(res)
		assert.Contains(t, lines, failureLine(codes.InstallerInterrupted))
		r.assertTokenContained(res)
		r.assertGroupGone()
	})
}

func TestScriptsJamfPolicy(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		policy := scriptPath(t, "jamf/policy.sh")
		// Jamf's arguments: mount point, computer name, user, then $4 and $5.
		// A glob in $5 must reach ctrld unexpanded.
		res := r.runScript(policy, r.env(), "/", "mac-1", "admin", canaryToken, "--custom-hostname=mac-* --intercept-mode=dns")
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "ctrld-install: provisioning succeeded (exit 0)", lastLine(r.assertInstallerLines(res)))
		calls := r.installerCalls()
		require.Len(t, calls, 1)
		require.Len(t, calls[0], 9)
		assert.Equal(t, []string{"--exit-profile", "jamf", "--log", r.logFile, "--token-file"}, calls[0][:5])
		r.assertPrivateTokenFile(calls[0][5])
		assert.Equal(t, []string{"--", "--custom-hostname=mac-*", "--intercept-mode=dns"}, calls[0][6:])
		assert.Equal(t, []string{"start", "--cd-org", canaryToken, "--custom-hostname=mac-*", "--intercept-mode=dns"}, r.argv()[0].Argv[1:])
		r.assertTokenContained(res)
	})
}

func TestScriptsJamfPolicyExitProfile(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		// A PIN-protected ctrld is already managed: every surface says so,
		// and the policy does not fail.
		r.script(standin.Script{Start: standin.Action{Exit: 126}})
		res := r.runScript(scriptPath(t, "jamf/policy.sh"), r.env(), "/", "mac-1", "admin", canaryToken)
		assert.Equal(t, 0, res.exit)
		lines := r.assertInstallerLines(res)
		assert.Contains(t, lines, failureLine(codes.DeactivationPinRequired))
		assert.Equal(t, codes.DeactivationPinRequired, r.record().Code)
		r.assertTokenContained(res)

		// A fatal code keeps its number.
		r.script(standin.Script{Start: identifierFailure(codes.APIRejected)})
		res = r.runScript(scriptPath(t, "jamf/policy.sh"), r.env(), "/", "mac-1", "admin", canaryToken)
		assert.Equal(t, codes.Must(codes.APIRejected).Exit, res.exit)
		assert.Contains(t, r.assertInstallerLines(res), failureLine(codes.APIRejected))
		r.assertTokenContained(res)
	})
}

func TestScriptsJamfPolicyWithoutToken(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		// The token is $4 only: an exported variable does not stand in.
		res := r.runScript(scriptPath(t, "jamf/policy.sh"), r.env("CTRLD_PROVISION_TOKEN="+canaryToken), "/", "mac-1", "admin", "", "")
		assert.Equal(t, codes.Must(codes.InstallerUsage).Exit, res.exit)
		assert.Contains(t, r.assertInstallerLines(res), failureLine(codes.InstallerUsage))
		assert.Equal(t, codes.InstallerUsage, r.record().Code, "inventory sees the misconfigured policy")
		r.assertCtrldNeverStarted()
		r.assertTokenContained(res)

		res = r.runScript(scriptPath(t, "jamf/policy.sh"), r.env("CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing")), "/", "mac-1", "admin", canaryToken)
		assert.Equal(t, codes.Must(codes.InstallerFailed).Exit, res.exit)
		assert.Empty(t, res.stdout)
		assert.Regexp(t, scriptError("jamf"), res.stderr)
		r.assertTmpEmpty()
	})
}

func TestScriptsJamfExtensionAttribute(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		ea := scriptPath(t, "jamf/extension-attribute.sh")
		res := r.runScript(ea, r.env())
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, "<result>NEVER_RUN</result>\n", res.stdout)

		r.script(standin.Script{Start: identifierFailure(codes.ListenerBindFailed)})
		r.runScript(scriptPath(t, "jamf/policy.sh"), r.env(), "/", "mac-1", "admin", canaryToken)
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

func TestScriptsIntuneMacOS(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		// The token pasted into the script body, as the script asks.
		src, err := os.ReadFile(scriptPath(t, "intune/install-macos.sh"))
		require.NoError(t, err)
		require.Contains(t, string(src), "\nprovision_token=''\n")
		script := filepath.Join(r.dir, "install-macos.sh")
		require.NoError(t, os.WriteFile(script, bytes.Replace(src, []byte("\nprovision_token=''\n"), []byte("\nprovision_token='"+canaryToken+"'\n"), 1), 0o700))
		res := r.runScript(script, r.env())
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "ctrld-install: provisioning succeeded (exit 0)", lastLine(r.assertInstallerLines(res)))
		calls := r.installerCalls()
		require.Len(t, calls, 1)
		require.Len(t, calls[0], 4)
		assert.Equal(t, []string{"--log", r.logFile, "--token-file"}, calls[0][:3], "default exit profile: 1618 means nothing on macOS")
		r.assertPrivateTokenFile(calls[0][3])
		r.assertTokenContained(res)

		// From the environment, and a failure keeps its code.
		require.NoError(t, os.Remove(r.serviceFile))
		r.script(standin.Script{Start: identifierFailure(codes.ServiceSelfcheckFailed)})
		res = r.runScript(scriptPath(t, "intune/install-macos.sh"), r.env("CTRLD_PROVISION_TOKEN="+canaryToken))
		assert.Equal(t, codes.Must(codes.ServiceSelfcheckFailed).Exit, res.exit)
		assert.Contains(t, r.assertInstallerLines(res), failureLine(codes.ServiceSelfcheckFailed))
		r.assertTokenContained(res)
	})
}

func TestScriptsFileWave(t *testing.T) {
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
		calls := r.installerCalls()
		require.Len(t, calls, 1)
		assert.Equal(t, []string{"--exit-profile", "filewave", "--log", r.logFile, "--token-file", filepath.Join(dir, "provision_token")}, calls[0])
		r.assertTokenContained(res)

		r.script(standin.Script{Start: r.world.success()})
		res = r.runScript(script, r.env())
		assert.Equal(t, 0, res.exit)
		r.assertTokenContained(res)

		// The next check-in finds it healthy: "Success (Skipped Install)".
		res = r.runScript(script, r.env())
		assert.Equal(t, 210, res.exit)
		assert.Equal(t, "ctrld-install: already provisioned, nothing to do (exit 0)\n", res.stdout)
		assert.Len(t, r.argv(), 2, "the skipped run did not start ctrld")

		// The token from the script's environment variables instead.
		require.NoError(t, os.Remove(filepath.Join(dir, "provision_token")))
		res = r.runScript(script, r.env("CTRLD_PROVISION_TOKEN="+canaryToken))
		assert.Equal(t, 210, res.exit)
		calls = r.installerCalls()
		r.assertPrivateTokenFile(calls[len(calls)-1][5])
		r.assertTokenContained(res)

		res = r.runScript(script, r.env("CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing")))
		assert.Equal(t, 220, res.exit)
		assert.Regexp(t, scriptError("filewave"), res.stderr)
	})
}

func TestScriptsRMM(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		res := r.runScript(scriptPath(t, "rmm/install.sh"), r.env("CTRLD_PROVISION_TOKEN="+canaryToken,
			"CTRLD_START_FLAGS= --custom-hostname  host-1 ", "CTRLD_INSTALL_TIMEOUT=4m"))
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		lines := r.assertInstallerLines(res)
		assert.Equal(t, "ctrld-install: provisioning succeeded (exit 0)", lastLine(lines))
		assert.Regexp(t, `time left [34]m`, lines[0], "the budget is the one given")
		calls := r.installerCalls()
		require.Len(t, calls, 1)
		require.Len(t, calls[0], 9)
		assert.Equal(t, []string{"--log", r.logFile, "--timeout", "4m", "--token-file"}, calls[0][:5])
		r.assertPrivateTokenFile(calls[0][5])
		assert.Equal(t, []string{"--", "--custom-hostname", "host-1"}, calls[0][6:])
		assert.Equal(t, []string{"start", "--cd-org", canaryToken, "--custom-hostname", "host-1"}, r.argv()[0].Argv[1:])
		r.assertTokenContained(res)

		// The RMM's next scheduled run leaves the healthy machine alone.
		res = r.runScript(scriptPath(t, "rmm/install.sh"), r.env("CTRLD_PROVISION_TOKEN="+canaryToken))
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, "ctrld-install: already provisioned, nothing to do (exit 0)\n", res.stdout)
		assert.Len(t, r.argv(), 1, "ctrld start ran once")
		r.assertTokenContained(res)
	})
}

func TestScriptsRMMWithoutToken(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		res := r.runScript(scriptPath(t, "rmm/install.sh"), r.env())
		assert.Equal(t, codes.Must(codes.InstallerUsage).Exit, res.exit)
		assert.Contains(t, r.assertInstallerLines(res), failureLine(codes.InstallerUsage))
		r.assertCtrldNeverStarted()
		r.assertTmpEmpty()
	})
}

func TestScriptsKandjiAudit(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		audit := scriptPath(t, "kandji/audit.sh")
		res := r.runScript(audit, r.env())
		assert.Equal(t, codes.Must(codes.ServiceNotRegistered).Exit, res.exit)
		assert.Contains(t, res.stdout, failureLine(codes.ServiceNotRegistered)+"\n")
		assert.Equal(t, [][]string{{"verify"}}, r.installerCalls())

		require.NoError(t, os.WriteFile(r.serviceFile, []byte("[Unit]\n"), 0o644))
		res = r.runScript(audit, r.env())
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, "ctrld-install: provisioning succeeded (exit 0)\n", res.stdout)
		r.assertCtrldNeverStarted()

		r.script(standin.Script{Status: standin.Action{Exit: 1}})
		res = r.runScript(audit, r.env())
		assert.Equal(t, codes.Must(codes.ServiceNotRunning).Exit, res.exit)

		res = r.runScript(audit, r.env("CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing")))
		assert.Equal(t, 1, res.exit)
		assert.Contains(t, res.stdout, "ctrld-install-kandji: ctrld-install is not installed")
	})
}

func TestScriptsMunkiInstallcheck(t *testing.T) {
	forEachShell(t, func(t *testing.T, r *rig) {
		check := scriptPath(t, "munki/installcheck.sh")
		res := r.runScript(check, r.env())
		assert.Equal(t, 0, res.exit, "not provisioned: install needed")
		require.NoError(t, os.WriteFile(r.serviceFile, []byte("[Unit]\n"), 0o644))
		res = r.runScript(check, r.env())
		assert.Equal(t, 1, res.exit, "healthy: installed")
		res = r.runScript(check, r.env("CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing")))
		assert.Equal(t, 0, res.exit, "no ctrld-install: install needed")
		r.assertCtrldNeverStarted()
	})
}

// The token-file block is pasted into each script that takes a token (MDM
// tools upload one file, so there is nothing to source); the copies must not
// drift apart.
func TestScriptsShareOneTokenBlock(t *testing.T) {
	block := regexp.MustCompile(`(?s)# --- private token file:.*?# --- end of the private token file block ---\n`)
	var first, firstName string
	for _, rel := range []string{"pkg/postinstall", "jamf/policy.sh", "intune/install-macos.sh", "filewave/install.sh", "rmm/install.sh"} {
		b, err := os.ReadFile(scriptPath(t, rel))
		require.NoError(t, err)
		m := block.FindAllString(string(b), -1)
		require.Len(t, m, 1, rel)
		if first == "" {
			first, firstName = m[0], rel
			continue
		}
		assert.Equal(t, first, m[0], "%s's token block differs from %s's", rel, firstName)
	}
}

// Every shell script in a tool's directory under scripts/ is run by a test
// in this file.
func TestScriptsAllCovered(t *testing.T) {
	covered := map[string]bool{
		"pkg/postinstall": true, "pkg/build-pkg.sh": true, "jamf/policy.sh": true, "jamf/extension-attribute.sh": true,
		"intune/install-macos.sh": true, "filewave/install.sh": true, "rmm/install.sh": true, "kandji/audit.sh": true,
		"munki/installcheck.sh": true,
	}
	root, err := filepath.Abs(scriptsDir)
	require.NoError(t, err)
	require.NoError(t, filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		require.NoError(t, err)
		if fi.IsDir() || strings.HasSuffix(p, ".ps1") || strings.HasSuffix(p, ".md") {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if !strings.Contains(filepath.ToSlash(rel), "/") {
			return nil // scripts/ itself holds build tooling, not MDM scripts
		}
		assert.True(t, covered[filepath.ToSlash(rel)], "%s has no test", rel)
		assert.NotZero(t, fi.Mode().Perm()&0o111, "%s is executable", rel)
		return nil
	}))
}
