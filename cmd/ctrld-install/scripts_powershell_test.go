//go:build unix

package main

// No PowerShell runs where these tests run, so the PowerShell scripts are
// checked for what can be read: the blocks pasted into several of them are
// the same, the home is locked down before ctrld-install runs, and the
// uninstall scripts never fail for a device with nothing left to remove.

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func readScript(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(scriptPath(t, rel))
	require.NoError(t, err)
	return string(b)
}

// installPS1 are the PowerShell scripts that run ctrld-install install.
var installPS1 = []string{"rmm/install.ps1", "intune/install.ps1", "intune/remediation-remediate.ps1"}

var uninstallPS1 = []string{"rmm/uninstall.ps1", "intune/uninstall.ps1"}

func TestScriptsPowerShellShareBlocks(t *testing.T) {
	t.Parallel()
	for _, b := range []struct {
		name    string
		scripts []string
	}{
		{"home", installPS1},
		{"ctrld without ctrld-install", uninstallPS1},
	} {
		block := regexp.MustCompile(`(?s)# --- ` + regexp.QuoteMeta(b.name) + `:.*?# --- end of the ` + regexp.QuoteMeta(b.name) + ` block ---\n`)
		var first string
		for _, rel := range b.scripts {
			m := block.FindAllString(readScript(t, rel), -1)
			require.Len(t, m, 1, "%s has the %s block once", rel, b.name)
			if first == "" {
				first = m[0]
				continue
			}
			assert.Equal(t, first, m[0], "%s's %s block differs from %s's", rel, b.name, b.scripts[0])
		}
	}
}

// C:\ControlD is Administrators' and SYSTEM's only, and made so before
// ctrld-install runs: ctrld-install refuses a home others can write.
func TestScriptsPowerShellHomeBeforeInstaller(t *testing.T) {
	t.Parallel()
	grant := `& icacls.exe $Dir /inheritance:r /grant:r '*S-1-5-32-544:(OI)(CI)F' '*S-1-5-18:(OI)(CI)F' | Out-Null`
	run := regexp.MustCompile(`(?m)^[^#\n]*& (\$bin|\(Join-Path \$dest 'ctrld-install\.exe'\)) `)
	for _, rel := range installPS1 {
		src := readScript(t, rel)
		assert.Contains(t, src, grant, rel)
		home := src[strings.Index(src, "# --- home:"):strings.Index(src, "# --- end of the home block ---")]
		assert.NotContains(t, home, "S-1-5-32-545", "%s: no entry for Users in the home", rel)
		call := strings.Index(src, "\nProtect-Home $dest\n")
		require.Greater(t, call, strings.Index(src, "# --- end of the home block ---"), "%s calls Protect-Home after defining it", rel)
		loc := run.FindStringIndex(src)
		require.NotNil(t, loc, "%s runs ctrld-install", rel)
		assert.Less(t, call, loc[0], "%s locks the home down before ctrld-install runs", rel)
	}
}

func TestScriptsPowerShellUninstallIsIdempotent(t *testing.T) {
	t.Parallel()
	for _, rel := range uninstallPS1 {
		src := readScript(t, rel)
		assert.NotContains(t, src, "exit 60", "%s: nothing to remove is not a failure", rel)
		missing := strings.Index(src, "\nif (-not (Test-Path -LiteralPath $bin -PathType Leaf)) {\n")
		require.Positive(t, missing, rel)
		assert.Regexp(t, `^\nif [^\n]*\n(    [^\n]*\n){0,4}    Remove-CtrldAlone `, src[missing:], "%s: no ctrld-install, then ctrld alone", rel)
		assert.Contains(t, src, "'ctrld-install: not installed, nothing to do (exit 0)'", rel)
		assert.Contains(t, src, "$cargs = @('service', 'uninstall')", "%s: the form of ctrld before 1.3.0", rel)
		// A missing PIN must fail the uninstall: no profile that makes it 0.
		assert.NotRegexp(t, `\$argv = @\('uninstall'[^)]*--exit-profile`, src, rel)
	}
}

// Windows RMM jobs re-run daily: a device managed under another PIN is
// settled (the jamf profile's 0), unless the admin picks a profile.
func TestScriptsPowerShellRMMProfile(t *testing.T) {
	t.Parallel()
	src := readScript(t, "rmm/install.ps1")
	assert.Contains(t, src, "if (-not $profileName) { $profileName = 'jamf' }")
	assert.Contains(t, src, "$argv = @('--exit-profile', $profileName)")
	assert.Contains(t, readScript(t, "intune/install.ps1"), "$argv = @('--exit-profile', 'intune', '--log', $log)")
}
