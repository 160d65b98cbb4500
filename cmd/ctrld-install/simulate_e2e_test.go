//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

// --simulate runs the whole pipeline for every registered code, needs no
// root and leaves nothing behind: its temporary home is removed.
func TestSimulateEveryCode(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	for _, c := range codes.All() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir()
			logFile := filepath.Join(t.TempDir(), "install.log")
			r := runInstaller(t, []string{"TMPDIR=" + tmp}, "", "--simulate", strings.ToLower(c.Name), "--token", canaryToken, "--log", logFile)
			assert.Equal(t, c.Exit, r.exit, "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			if c.IsOK() {
				assert.True(t, strings.HasSuffix(r.stdout, "ctrld-install: provisioning succeeded (exit 0)\n"), r.stdout)
			} else {
				assert.True(t, strings.HasSuffix(r.stdout, fmt.Sprintf("ctrld-install: next step: %s\nctrld-install: provisioning failed: stage=%s code=%s (exit %d)\n",
					c.NextStep, c.Stage, c.Name, c.Exit)), r.stdout)
			}
			log, _ := os.ReadFile(logFile)
			assert.NotContains(t, r.stdout+r.stderr+string(log), canaryToken)
			if !c.IsOK() {
				assert.Contains(t, string(log), fmt.Sprintf("code=%s (exit %d)", c.Name, c.Exit))
			}
			left, err := os.ReadDir(tmp)
			require.NoError(t, err)
			assert.Empty(t, left, "the simulation must remove its temporary home")
		})
	}
}

// The stand-in only answers to its name and its environment together, so a
// binary renamed to ctrld still refuses to play ctrld.
func TestStandInNeedsBothNameAndEnvironment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	renamed := dir + "/ctrld"
	require.NoError(t, os.Link(installerBin, renamed), "a link: a copy being written cannot be executed while other tests fork")
	r := runInstaller2(t, renamed, nil, "--version")
	assert.NotContains(t, r.stdout, "ctrld version")
	assert.Equal(t, 61, r.exit, "it is ctrld-install, and --version is not one of its flags")
}

// The stand-in's test-only behaviours (floods, daemons, the device model,
// argv records) are not in the binary that ships: only --simulate's core.
func TestShippedBinaryHasNoTestStandIn(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", "github.com/Control-D-Inc/ctrld-install/cmd/ctrld-install").Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), "github.com/Control-D-Inc/ctrld-install/internal/standin\n")
	assert.NotContains(t, string(out), "internal/standin/extra", "ctrld-install imports the stand-in's test-only behaviours")
}
