//go:build unix

package main

// Every uninstall script is idempotent: a second run, after the first
// removed ctrld and ctrld-install, is "nothing to do" and exits 0; and a
// device with ctrld but no ctrld-install (ctrld from an older package) is
// cleaned with the installed release's own uninstall and the same check.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// uninstaller runs one uninstall script the way its tool does, with the
// PIN (may be empty) and cleanup asked for.
type uninstaller struct {
	name string
	run  func(r *rig, env []string, pin string) result
}

var uninstallers = []uninstaller{
	{"jamf", func(r *rig, env []string, pin string) result {
		return r.jamf("jamf/uninstall.sh", env, pin, "cleanup=yes", "", "", "", "", "", "")
	}},
	{"rmm", func(r *rig, env []string, pin string) result {
		env = append(env, "CTRLD_UNINSTALL_CLEANUP=yes")
		if pin != "" {
			env = append(env, "CTRLD_DEACTIVATION_PIN="+pin)
		}
		return r.runScript(scriptPath(r.t, "rmm/uninstall.sh"), env)
	}},
	{"munki", func(r *rig, env []string, pin string) result {
		settings := map[string]string{"cleanup": "yes"}
		if pin != "" {
			settings["deactivation_pin"] = pin
		}
		return r.runScript(r.withSettings("munki/uninstall.sh", settings), env)
	}},
}

func forEachUninstaller(t *testing.T, f func(t *testing.T, r *rig, u uninstaller)) {
	t.Parallel()
	for _, u := range uninstallers {
		t.Run(u.name, func(t *testing.T) {
			forEachShell(t, func(t *testing.T, r *rig) { f(t, r, u) })
		})
	}
}

func stdoutLines(res result) []string {
	return strings.Split(strings.TrimSuffix(res.stdout, "\n"), "\n")
}

func TestScriptsUninstallTwice(t *testing.T) {
	fullE2E(t)
	forEachUninstaller(t, func(t *testing.T, r *rig, u uninstaller) {
		r.provisioned()
		r.script(standin.Script{Uninstall: r.uninstalls()})
		res := u.run(r, r.env(), canaryPIN)
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "ctrld-install: uninstall succeeded (exit 0)", lastLine(stdoutLines(res)))
		r.assertOwnFilesGone()

		// The policy runs again, on a device with nothing left: not a failure.
		res = u.run(r, r.env(), canaryPIN)
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "ctrld-install: not installed, nothing to do (exit 0)\n", res.stdout)
		assert.Empty(t, res.stderr)
		assert.Len(t, r.uninstallCalls(), 1, "ctrld uninstall ran once, in the first run")
		r.assertOwnFilesGone()
		r.assertSecretContained(res, "")
	})
}

// ctrld from an older package, with no ctrld-install beside it.
func TestScriptsUninstallCtrldAlone(t *testing.T) {
	fullE2E(t)
	forEachUninstaller(t, func(t *testing.T, r *rig, u uninstaller) {
		missing := "CTRLD_INSTALL_BIN=" + filepath.Join(r.dir, "missing")
		r.provisioned()
		r.script(standin.Script{Uninstall: r.uninstalls()})
		res := u.run(r, r.env(missing), canaryPIN)
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "ctrld-install: uninstall succeeded (exit 0)\n", res.stdout, "ctrld's own output is not shown")
		assert.Empty(t, res.stderr)
		r.assertUninstalledWith(canaryPIN, true)
		assert.NoFileExists(t, r.serviceFile)
		assert.NoFileExists(t, r.logFile, "removed with ctrld-install's other files")
		r.assertSecretContained(res, "")

		// And again: nothing to do.
		res = u.run(r, r.env(missing), canaryPIN)
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, "ctrld-install: not installed, nothing to do (exit 0)\n", res.stdout)
		assert.Len(t, r.uninstallCalls(), 1)
	})
}

func TestScriptsUninstallCtrldAloneFailures(t *testing.T) {
	fullE2E(t)
	forEachUninstaller(t, func(t *testing.T, r *rig, u uninstaller) {
		missing := "CTRLD_INSTALL_BIN=" + filepath.Join(r.dir, "missing")
		r.provisioned()

		// A PIN that ctrld refuses: the next step, then the failure line last.
		r.script(standin.Script{Uninstall: standin.Action{RequirePIN: "1234", RemoveFiles: []string{r.serviceFile}}})
		res := u.run(r, r.env(missing), canaryPIN)
		assert.Equal(t, 126, res.exit)
		lines := stdoutLines(res)
		require.Len(t, lines, 2, res.stdout)
		assert.True(t, strings.HasPrefix(lines[0], "ctrld-install: next step: "), lines[0])
		assert.Equal(t, "ctrld-install: uninstall failed: stage=service code=DEACTIVATION_PIN_REQUIRED (exit 126)", lines[1])
		assert.FileExists(t, r.serviceFile)
		assert.Contains(t, r.log(), "code=DEACTIVATION_PIN_REQUIRED (exit 126)\n", "kept in the log for the diagnosis")
		r.assertSecretContained(res, "")

		// ctrld says it is done, but the service stays.
		r.script(standin.Script{Uninstall: standin.Action{Stdout: []string{"ERR could not reach the service"}}})
		res = u.run(r, r.env(missing), "")
		assert.Equal(t, 56, res.exit)
		assert.Equal(t, "ctrld-install: uninstall failed: stage=service code=SERVICE_UNINSTALL_FAILED (exit 56)", lastLine(stdoutLines(res)))
		assert.NotContains(t, res.stdout, "could not reach")

		// A service definition with no ctrld to remove it.
		res = u.run(r, r.env(missing, "CTRLD_INSTALL_CTRLD="+filepath.Join(r.dir, "no-ctrld")), "")
		assert.Equal(t, 56, res.exit)
		assert.Equal(t, "ctrld-install: uninstall failed: stage=service code=SERVICE_UNINSTALL_FAILED (exit 56)", lastLine(stdoutLines(res)))
	})
}

// ctrld before 1.3.0 names the command "service uninstall" and takes no
// --pin or --cleanup.
func TestScriptsUninstallCtrldAloneLegacy(t *testing.T) {
	fullE2E(t)
	forEachUninstaller(t, func(t *testing.T, r *rig, u uninstaller) {
		r.provisioned()
		argv := filepath.Join(r.dir, "legacy-argv")
		stub := filepath.Join(r.dir, "legacy-ctrld")
		body := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'ctrld version v1.2.1-0c99d27'; exit 0; fi\n" +
			"printf '%s\\n' \"$*\" >>" + shQuote(argv) + "\n" +
			"if [ \"$1 $2\" = 'service uninstall' ]; then rm -f " + shQuote(r.serviceFile) + "; echo 'Service uninstalled'; exit 0; fi\n" +
			"echo 'Error: unknown command' >&2; exit 1\n"
		require.NoError(t, os.WriteFile(stub, []byte(body), 0o755))
		res := u.run(r, r.env("CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing"), "CTRLD_INSTALL_CTRLD="+stub), canaryPIN)
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "ctrld-install: uninstall succeeded (exit 0)\n", res.stdout)
		b, err := os.ReadFile(argv)
		require.NoError(t, err)
		assert.Equal(t, "service uninstall\n", string(b))
		assert.NoFileExists(t, r.serviceFile)
	})
}
