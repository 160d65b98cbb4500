package main

import (
	"os"
	"testing"
)

// e2eFullEnv runs every test of the built binary. `go test ./...` runs the
// golden scripts and one test for each promise the binary makes on its
// own (a budget, a signal, a refusal, the stand-in kept out of the
// release); the rest — every signal, every code, every MDM script, polls
// and replays by the hundred — costs a Go process start each, tens of
// milliseconds on a small VM, and runs in CI (.ci/run), which sets it.
const e2eFullEnv = "CTRLD_INSTALL_E2E_FULL"

// fullE2E skips a test that only CI's full run of the package makes.
func fullE2E(t *testing.T) {
	t.Helper()
	if os.Getenv(e2eFullEnv) != "1" {
		t.Skipf("run by CI; set %s=1 to run it here", e2eFullEnv)
	}
}
