package cli

import (
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// explain - reads the input from standard input: a log's lines piped in,
// with a token among them that is never printed, in UTF-8 or in the UTF-16
// of PowerShell 5.1's pipes and files; more than it reads is a usage error
// that names no input.
func TestExplainStandardInput(t *testing.T) {
	t.Parallel()
	log := "Script result: ctrld-install: running ctrld start (ctrld 1.5.0, attempt 1 of 3, time left 5m0s)\r\n--token " + canaryToken + "\r\n" +
		"Script result: ctrld-install: provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)\r\n"
	utf16le := "\xff\xfe"
	for _, u := range utf16.Encode([]rune(log)) {
		utf16le += string([]byte{byte(u), byte(u >> 8)})
	}
	for name, stdin := range map[string]string{"UTF-8": log, "UTF-16": utf16le} {
		r := runIn(wine.TempDir(t), stdin, "explain", "-")
		if r.exit != 0 || !strings.Contains(r.stdout, "\nLISTENER_BIND_FAILED\n") || r.stderr != "" {
			t.Errorf("%s: explain - exited %d:\n%s%s", name, r.exit, r.stdout, r.stderr)
		}
		if strings.Contains(r.stdout+r.stderr, canaryToken) {
			t.Errorf("%s: explain - printed the token", name)
		}
	}
	for name, stdin := range map[string]string{
		"empty":      "",
		"too long":   strings.Repeat("x", maxExplainInput) + "\n" + canaryToken,
		"a token":    canaryToken + "\n",
		"a dash":     "-",
		"only noise": "nothing here\n",
	} {
		r := runIn(wine.TempDir(t), stdin, "explain", "-")
		if r.exit != 61 || r.stdout != "" || strings.Contains(r.stderr, canaryToken) || strings.Contains(r.stderr, "nothing here") {
			t.Errorf("%s: explain - exited %d:\n%s%s", name, r.exit, r.stdout, r.stderr)
		}
	}
}
