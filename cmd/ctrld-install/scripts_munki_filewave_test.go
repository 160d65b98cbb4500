//go:build unix

package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// plistDict reads a flat plist dictionary: string values as they are,
// booleans as "true" or "false".
func plistDict(t *testing.T, b []byte) map[string]string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	out := map[string]string{}
	var key string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name.Local {
		case "key":
			require.NoError(t, d.DecodeElement(&key, &se))
		case "string":
			var v string
			require.NoError(t, d.DecodeElement(&v, &se))
			out[key] = v
		case "true", "false":
			out[key] = se.Name.Local
		}
	}
}

// The pkginfo template carries the scripts as they are and the keys that
// make Munki install, repair and remove without a user.
func TestScriptsMunkiPkginfoTemplate(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(scriptPath(t, "munki/ctrld.pkginfo"))
	require.NoError(t, err)
	keys := plistDict(t, b)
	for key, script := range map[string]string{
		"installcheck_script":   "munki/installcheck.sh",
		"uninstallcheck_script": "munki/uninstallcheck.sh",
		"uninstall_script":      "munki/uninstall.sh",
	} {
		assert.Equal(t, readScript(t, script), keys[key], "%s is %s as it is", key, script)
	}
	for key, want := range map[string]string{
		"uninstall_method": "uninstall_script", "uninstallable": "true",
		"unattended_install": "true", "unattended_uninstall": "true",
		"minimum_os_version": "12.0", "name": "ctrld",
	} {
		assert.Equal(t, want, keys[key], key)
	}
	assert.Contains(t, string(b), "WARNING: a deactivation PIN", "the PIN's exposure is said where it would be typed")
	assert.Contains(t, keys["uninstall_script"], "\ndeactivation_pin='' ", "no PIN in the template")
}

// FileWave's Verification script repairs and upgrades without a token, and
// leaves a device never provisioned to the provisioning fileset.
func TestScriptsFileWaveRepair(t *testing.T) {
	fullE2E(t)
	forEachShell(t, func(t *testing.T, r *rig) {
		repair := scriptPath(t, "filewave/repair.sh")
		res := r.runScript(repair, r.env())
		assert.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "ctrld-install: not installed (exit 54)\n", res.stdout)
		assert.Equal(t, [][]string{{"verify", "--timeout", "30s"}}, r.installerCalls(), "only asked")

		r.provisioned()
		res = r.runScript(repair, r.env())
		assert.Equal(t, 0, res.exit)
		assert.Equal(t, "ctrld-install: already provisioned, nothing to do (exit 0)\n", res.stdout)

		running := filepath.Join(r.dir, "running")
		r.script(standin.Script{Status: standin.Action{NeedFile: running}, Restart: standin.Action{WriteFiles: map[string]string{running: "1"}}})
		res = r.runScript(repair, r.env())
		assert.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
		assert.Equal(t, "ctrld-install: repair applied, ctrld restarted (exit 0)", lastLine(r.assertInstallerLines(res)))
		assert.Equal(t, []string{"--exit-profile", "jamf", "--log", r.logFile}, r.lastCall())
		r.assertCtrldNeverStarted()
		r.assertSecretContained(res, "")

		// A repair that does not hold fails with its code; no token, so
		// nothing is provisioned. (ctrld restart fails outright: a restart
		// that exits 0 would give the service its 15 s to come up.)
		r.script(standin.Script{Status: standin.Action{Exit: 1}, Restart: standin.Action{Exit: 1}})
		res = r.runScript(repair, r.env())
		assert.Equal(t, 52, res.exit)
		assert.Equal(t, "ctrld-install: provisioning failed: stage=service code=SERVICE_START_FAILED (exit 52)", lastLine(r.assertInstallerLines(res)))
		r.assertCtrldNeverStarted()

		res = r.runScript(repair, r.env("CTRLD_INSTALL_BIN="+filepath.Join(r.dir, "missing")))
		assert.Equal(t, 60, res.exit)
		assert.Regexp(t, scriptError("filewave"), res.stderr)
	})
}
