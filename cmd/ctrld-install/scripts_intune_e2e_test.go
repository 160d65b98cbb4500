//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// Intune caps a PKG app's pre- and post-install scripts ("must be less than
// 5121 characters long" on Microsoft's page when this was written; 15,360 on
// a later one): the macOS script stays under the smallest limit seen, so
// wherever an admin pastes it, it fits.
func TestScriptsIntuneMacOSIsShort(t *testing.T) {
	t.Parallel()
	for _, rel := range []string{"intune/install-macos.sh", "intune/custom-attribute-macos.sh"} {
		n := utf8.RuneCountInString(readScript(t, rel))
		assert.Less(t, n, 5121, "%s has %d characters", rel, n)
	}
}

func TestScriptsIntuneMacOS(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		// The settings filled in at the top of the script, as it asks.
		script := r.withSettings("intune/install-macos.sh", map[string]string{
			"provision_token": canaryToken, "time_limit": "4m", "retries": "1", "start_flags": "--custom-hostname=mac-1  --intercept-mode=*"})
		res := r.runScript(script, r.env())
		require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "ctrld-install: provisioning succeeded (exit 0)", lastLine(r.assertInstallerLines(res)))
		assert.Equal(t, [][]string{{"--exit-profile", "jamf", "--log", r.logFile, "--timeout", "4m", "--retries", "1", "--token-stdin",
			"--", "--custom-hostname=mac-1", "--intercept-mode=*"}}, r.installerCalls())
		r.assertSecretContained(res, canaryToken)

		// Script frequency runs it again: a healthy Mac is left alone.
		res = r.runScript(script, r.env())
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, "ctrld-install: already provisioned, nothing to do (exit 0)\n", res.stdout)
		assert.Len(t, r.argv(), 1)

		// A stopped daemon is repaired, without a token: the script with
		// nothing filled in is a repair script.
		r.script(standin.Script{Status: standin.Action{NeedFile: filepath.Join(r.dir, "running")}, Restart: standin.Action{
			WriteFiles: map[string]string{filepath.Join(r.dir, "running"): "1"}}})
		res = r.runScript(scriptPath(t, "intune/install-macos.sh"), r.env())
		assert.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "ctrld-install: repair applied, ctrld restarted (exit 0)", lastLine(r.assertInstallerLines(res)))
		assert.Equal(t, []string{"--exit-profile", "jamf", "--log", r.logFile}, r.lastCall())
		assert.Len(t, r.argv(), 1, "no ctrld start")
		r.assertSecretContained(res, "")
	})
}

func TestScriptsIntuneMacOSOutcomes(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		script := r.withSettings("intune/install-macos.sh", map[string]string{"provision_token": canaryToken, "force": "yes"})
		// A fatal code keeps its number, the next step before its line.
		r.script(standin.Script{Start: identifierFailure(codes.ServiceSelfcheckFailed)})
		res := r.runScript(script, r.env())
		assert.Equal(t, codes.Must(codes.ServiceSelfcheckFailed).Exit, res.exit)
		lines := r.assertInstallerLines(res)
		assert.Equal(t, failureLine(codes.ServiceSelfcheckFailed), lastLine(lines))
		assert.True(t, strings.HasPrefix(lines[len(lines)-2], "ctrld-install: next step: "))
		assert.Equal(t, []string{"--exit-profile", "jamf", "--log", r.logFile, "--force", "--token-stdin"}, r.lastCall())
		r.assertSecretContained(res, canaryToken)

		// Managed under another deactivation PIN: settled, exit 0, the
		// code still on the last line.
		r.script(standin.Script{Start: standin.Action{Exit: 126}})
		res = r.runScript(script, r.env())
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, failureLine(codes.DeactivationPinRequired), lastLine(r.assertInstallerLines(res)))
		r.assertSecretContained(res, canaryToken)
	})
}

// A setting ctrld-install does not take ends with its own usage error,
// which never repeats the value.
func TestScriptsIntuneMacOSUsageErrors(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		for _, settings := range []map[string]string{
			{"provision_token": canaryToken, "time_limit": "soonish"},
			{"provision_token": canaryToken, "force": "maybeso"},
			{"provision_token": canaryToken, "provision_resolver": canaryResolver},
			{}, // nothing installed and no token
		} {
			res := r.runScript(r.withSettings("intune/install-macos.sh", settings), r.env())
			assert.Equal(t, 61, res.exit, "%v\nstdout:\n%s\nstderr:\n%s", settings, res.stdout, res.stderr)
			assert.Equal(t, usageLine, lastLine(r.assertInstallerLines(res)))
			assert.Regexp(t, `^ctrld-install: error: `, res.stderr)
			assert.NotContains(t, res.stdout+res.stderr, "soonish", "a value is never repeated")
			assert.NotContains(t, res.stdout+res.stderr, "maybeso", "a value is never repeated")
			r.assertCtrldNeverStarted()
			r.assertSecretContained(res, "")
		}
		res := r.runScript(scriptPath(t, "intune/install-macos.sh"), r.env("CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing")))
		assert.Equal(t, 60, res.exit)
		assert.Empty(t, res.stdout)
		assert.Regexp(t, scriptError("intune"), res.stderr)
	})
}

func TestScriptsIntuneMacOSCustomAttribute(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		attr := scriptPath(t, "intune/custom-attribute-macos.sh")
		res := r.runScript(attr, r.env("CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing")))
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, "NOT_INSTALLED\n", res.stdout)
		res = r.runScript(attr, r.env())
		assert.Equal(t, "NOT_INSTALLED\n", res.stdout, "never provisioned: a state")
		r.provisioned()
		res = r.runScript(attr, r.env())
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, "OK\n", res.stdout)
		newer := r.withSettings("intune/custom-attribute-macos.sh", map[string]string{"min_version": "1.6.0"})
		res = r.runScript(newer, r.env())
		assert.Equal(t, "CTRLD_VERSION_UNSUPPORTED\n", res.stdout)
		assert.Equal(t, []string{"verify", "--timeout", "30s", "--min-version", "1.6.0"}, r.lastCall())
		r.script(standin.Script{Status: standin.Action{Exit: 1}})
		res = r.runScript(attr, r.env())
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, "SERVICE_NOT_RUNNING\n", res.stdout)
		assert.Empty(t, res.stderr)
		r.assertCtrldNeverStarted()

		// Whatever else a broken binary prints never reaches the inventory.
		bad := filepath.Join(r.dir, "bad")
		require.NoError(t, os.WriteFile(bad, []byte("#!/bin/sh\necho 'ctrld-install: verify failed: stage=service code="+canaryToken+" (exit 55)'\nexit 55\n"), 0o755))
		res = r.runScript(attr, r.env("CTRLD_INSTALL_BIN="+bad))
		assert.Equal(t, "STATUS_FAILED\n", res.stdout)
	})
}
