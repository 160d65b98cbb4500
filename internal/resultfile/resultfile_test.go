//go:build unix

package resultfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

const good = `{"version":1,"timestamp":"2026-08-18T12:00:00Z","stage":"listener","code":"LISTENER_BIND_FAILED","exit_code":41,"message":"CANARYTOKEN0123456789"}`

func write(t *testing.T, dir, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, "provision_result.json")
	require.NoError(t, os.WriteFile(p, []byte(body), mode))
	require.NoError(t, os.Chmod(p, mode)) // WriteFile is subject to umask
	return p
}

func TestInspect(t *testing.T) {
	start := time.Now().Add(-time.Minute)
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string) string
		want  Status
	}{
		{"absent", func(t *testing.T, dir string) string { return filepath.Join(dir, "nope.json") }, Absent},
		{"parent is a file", func(t *testing.T, dir string) string {
			return filepath.Join(write(t, dir, good, 0o600), "x")
		}, Absent},
		{"fresh and valid", func(t *testing.T, dir string) string { return write(t, dir, good, 0o600) }, Used},
		{"world readable is fine", func(t *testing.T, dir string) string { return write(t, dir, good, 0o644) }, Used},
		{"stale", func(t *testing.T, dir string) string {
			p := write(t, dir, good, 0o600)
			old := start.Add(-time.Hour)
			require.NoError(t, os.Chtimes(p, old, old))
			return p
		}, Stale},
		{"stale garbage is stale", func(t *testing.T, dir string) string {
			p := write(t, dir, "garbage", 0o600)
			old := start.Add(-time.Hour)
			require.NoError(t, os.Chtimes(p, old, old))
			return p
		}, Stale},
		{"group writable", func(t *testing.T, dir string) string { return write(t, dir, good, 0o620) }, Untrusted},
		{"world writable", func(t *testing.T, dir string) string { return write(t, dir, good, 0o602) }, Untrusted},
		{"symlink to a good file", func(t *testing.T, dir string) string {
			target := write(t, dir, good, 0o600)
			link := filepath.Join(dir, "link.json")
			require.NoError(t, os.Symlink(target, link))
			return link
		}, Untrusted},
		{"directory", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "d")
			require.NoError(t, os.Mkdir(p, 0o700))
			return p
		}, Untrusted},
		{"fifo", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "fifo")
			require.NoError(t, syscall.Mkfifo(p, 0o600))
			return p
		}, Untrusted},
		{"10 MB", func(t *testing.T, dir string) string {
			return write(t, dir, good[:len(good)-1]+`,"x":"`+strings.Repeat("a", 10<<20)+`"}`, 0o600)
		}, Untrusted},
		{"truncated json", func(t *testing.T, dir string) string { return write(t, dir, good[:40], 0o600) }, Invalid},
		{"unknown code", func(t *testing.T, dir string) string {
			return write(t, dir, strings.Replace(good, "LISTENER_BIND_FAILED", "CANARYTOKEN0123456789", 1), 0o600)
		}, Invalid},
		{"exit disagrees", func(t *testing.T, dir string) string {
			return write(t, dir, strings.Replace(good, `"exit_code":41`, `"exit_code":42`, 1), 0o600)
		}, Invalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.setup(t, t.TempDir())
			done := make(chan Finding, 1)
			go func() { done <- Inspect(p, start) }()
			select {
			case f := <-done:
				assert.Equal(t, tc.want, f.Status)
				if tc.want == Used {
					assert.Equal(t, codes.ListenerBindFailed, f.Code.Name)
				} else {
					assert.Equal(t, codes.Code{}, f.Code)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Inspect blocked")
			}
		})
	}
}

func TestInspectRejectsAnotherOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner needs root")
	}
	p := write(t, t.TempDir(), good, 0o600)
	require.NoError(t, os.Chown(p, 65534, 65534))
	assert.Equal(t, Untrusted, Inspect(p, time.Now().Add(-time.Minute)).Status)
}

// A file written earlier in the same wall-clock second as the run's start
// counts as fresh, because some file systems keep whole seconds only.
func TestInspectFreshnessUsesWholeSeconds(t *testing.T) {
	p := write(t, t.TempDir(), good, 0o600)
	sec := time.Now().Truncate(time.Second)
	require.NoError(t, os.Chtimes(p, sec, sec))
	assert.Equal(t, Used, Inspect(p, sec.Add(900*time.Millisecond)).Status)
	assert.Equal(t, Stale, Inspect(p, sec.Add(time.Second)).Status)
}
