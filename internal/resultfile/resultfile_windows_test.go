//go:build windows

package resultfile

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

const winGood = `{"version":1,"timestamp":"2026-08-18T12:00:00Z","stage":"listener","code":"LISTENER_BIND_FAILED","exit_code":41,"message":"CANARYTOKEN0123456789"}`

func winWrite(t *testing.T, p, body string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// winReplace writes body as ctrld does: a new file renamed over the path.
func winReplace(t *testing.T, p, body string, mtime time.Time) {
	t.Helper()
	winWrite(t, p+".tmp", body)
	if err := os.Chtimes(p+".tmp", mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		t.Fatal(err)
	}
}

// The trust rules as Windows has them: no mode bits, so a file ctrld wrote
// in the home is trusted by its type, size and freshness alone.
func TestInspectOnWindows(t *testing.T) {
	past := time.Now().Add(-24 * time.Hour)
	for _, tc := range []struct {
		name   string
		before func(t *testing.T, p string)
		during func(t *testing.T, p string)
		want   outcome.FileState
	}{
		{"nothing before, nothing after", nil, nil, outcome.FileAbsent},
		{"nothing before, written during", nil, func(t *testing.T, p string) { winWrite(t, p, winGood) }, outcome.FileUsed},
		{"nothing before, read-only", nil, func(t *testing.T, p string) {
			winWrite(t, p, winGood)
			if err := os.Chmod(p, 0o444); err != nil {
				t.Fatal(err)
			}
		}, outcome.FileUsed},
		{"left from an earlier run, untouched", func(t *testing.T, p string) { winWrite(t, p, winGood) }, nil, outcome.FileStale},
		// A FileInfo from Lstat on Windows reads the file's identity at its
		// first comparison: unless Snapshot pins it, a replaced file would
		// look like the one before.
		{"left from an earlier run, replaced during", func(t *testing.T, p string) {
			winWrite(t, p, winGood)
			if err := os.Chtimes(p, past, past); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, p string) { winReplace(t, p, winGood, past) }, outcome.FileUsed},
		{"left from an earlier run, rewritten in place", func(t *testing.T, p string) {
			winWrite(t, p, winGood[:len(winGood)-1]+`,"x":1}`)
		}, func(t *testing.T, p string) { winWrite(t, p, winGood) }, outcome.FileUsed},
		{"a directory", nil, func(t *testing.T, p string) {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}, outcome.FileUntrusted},
		{"too large", nil, func(t *testing.T, p string) {
			winWrite(t, p, winGood+string(make([]byte, 64<<10)))
		}, outcome.FileUntrusted},
		{"not a registered failure", nil, func(t *testing.T, p string) { winWrite(t, p, `{"version":1}`) }, outcome.FileInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(wine.TempDir(t), "provision_result.json")
			if tc.before != nil {
				tc.before(t, p)
			}
			b := Snapshot(p)
			if tc.during != nil {
				tc.during(t, p)
			}
			f := b.Inspect()
			if f.State != tc.want {
				t.Errorf("Inspect().State = %q, want %q", f.State, tc.want)
			}
			if tc.want == outcome.FileUsed && f.Code.Name != codes.ListenerBindFailed {
				t.Errorf("Inspect().Code.Name = %q, want %q", f.Code.Name, codes.ListenerBindFailed)
			}
		})
	}
}

// ctrld renames its result file into place while ctrld-install may be
// reading the previous one: the reader shares delete, so ctrld's rename of
// another name over it is not refused for the reader's sake.
func TestInspectLetsCtrldMoveTheFileItReads(t *testing.T) {
	dir := wine.TempDir(t)
	p := filepath.Join(dir, "provision_result.json")
	winWrite(t, p, winGood)
	// As inspect opens it.
	f, _, err := safefile.Open(p, safefile.Rules{Owner: safefile.Self(), Private: true})
	if err != nil {
		t.Fatalf("opening the result file as inspect does: %v", err)
	}
	defer f.Close()
	if err := os.Rename(p, p+".old"); err != nil {
		t.Errorf("renaming the result file while ctrld-install reads it: %v", err)
	}
}
