package standin

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

func TestBuilds(t *testing.T) {
	dir := wine.TempDir(t)
	master := filepath.Join(dir, "master")
	body := bytes.Repeat([]byte("\x7fELF not really\n"), 1000)
	require.NoError(t, os.WriteFile(master, body, 0o755))
	s := Script{Version: "v1.5.0", Builds: map[string]Build{"dying": {Version: "v1.6.0", RunExit: 2}}}

	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	exe, err := LinkBuild(bin, master, s, "kept")
	require.NoError(t, err)
	assert.Equal(t, "kept", BuildLabel(exe))
	b, err := os.ReadFile(exe)
	require.NoError(t, err)
	assert.Equal(t, append(append([]byte(nil), body...), "\nCTRLD-STANDIN-BUILD:kept\n"...), b,
		"the master's bytes, then the trailer")
	fi, err := os.Stat(exe)
	require.NoError(t, err)
	if runtime.GOOS != "windows" {
		assert.NotZero(t, fi.Mode()&0o100, "executable")
	}
	assert.Equal(t, "", BuildLabel(master), "the master is untouched: a copy, not a link")
	sidecar, err := os.ReadFile(SidecarPath(exe))
	require.NoError(t, err)
	assert.Contains(t, string(sidecar), `"builds":{"dying":{"version":"v1.6.0","run_exit":2}}`)

	// A rename over the path: the new build's label, the same sidecar,
	// no temporary file left.
	require.NoError(t, ReplaceBuild(exe, master, "dying"))
	assert.Equal(t, "dying", BuildLabel(exe))
	after, err := os.ReadFile(SidecarPath(exe))
	require.NoError(t, err)
	assert.Equal(t, sidecar, after)
	entries, err := os.ReadDir(bin)
	require.NoError(t, err)
	assert.Len(t, entries, 2, "ctrld and its sidecar only")

	for _, bad := range []string{"", "two\nlines", string(bytes.Repeat([]byte("x"), maxLabel+1))} {
		assert.Error(t, ReplaceBuild(exe, master, bad), "%q", bad)
	}
	assert.Equal(t, "dying", BuildLabel(exe), "a refused label leaves the build")

	// Files without a trailer, or too short to hold one, have no label.
	short := filepath.Join(dir, "short")
	require.NoError(t, os.WriteFile(short, []byte("x\n"), 0o644))
	assert.Equal(t, "", BuildLabel(short))
	assert.Equal(t, "", BuildLabel(filepath.Join(dir, "absent")))
	only := filepath.Join(dir, "only")
	require.NoError(t, os.WriteFile(only, []byte(BuildTrailer+"x\n"), 0o644))
	assert.Equal(t, "x", BuildLabel(only))
}
