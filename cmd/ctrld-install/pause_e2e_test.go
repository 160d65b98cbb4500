//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// Ten runs a check-in apart with a token the API rejects: the first asks
// the API, the runs inside the pause do not (the stand-in counts its
// starts) and end with the earlier code, and the run after the pause asks
// again; --force and another token ask at once.
func TestRejectedTokenFollowsThePause(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	w := newWorld(t)
	w.script(standin.Script{Start: identifierFailure(codes.APIRejected)})
	rejected := codes.Must(codes.APIRejected)
	starts := func() int { return len(w.argv()) }
	pause := filepath.Join(w.home, ".ctrld-install.pause.json")
	// The pause's end moved to now, as the 15 minutes would.
	endPause := func() {
		var p map[string]any
		b, err := os.ReadFile(pause)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &p))
		p["next"] = time.Now().Unix() - 1
		b, err = json.Marshal(p)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(pause, b, 0o600))
	}
	for i := range 10 {
		if i == 5 {
			endPause()
		}
		r := w.run("--token", canaryToken, "--retries", "0")
		assert.Equal(t, rejected.Exit, r.exit, "run %d", i)
		assert.True(t, strings.HasSuffix(r.stdout, failureLine(codes.APIRejected)+"\n"), "run %d:\n%s", i, r.stdout)
		paused := i != 0 && i != 5
		assert.Equal(t, paused, strings.Contains(r.stdout, "ctrld-install: plan: the same request was refused for good at its last try (API_REJECTED); it is sent again from "), "run %d:\n%s", i, r.stdout)
		assert.NotEmpty(t, w.record().NextTry, "run %d", i)
		w.assertNoCanary(r)
	}
	assert.Equal(t, 2, starts(), "the API was asked at the first run and after the pause only")
	w.run("--token", canaryToken, "--retries", "0", "--force")
	w.run("--token", "X"+canaryToken, "--retries", "0")
	assert.Equal(t, 4, starts(), "--force and another token ask at once")
}
