//go:build unix

package resultfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

const good = `{"version":1,"timestamp":"2026-08-18T12:00:00Z","stage":"listener","code":"LISTENER_BIND_FAILED","exit_code":41,"message":"CANARYTOKEN0123456789"}`

func write(t *testing.T, dir, body string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, "provision_result.json")
	if err := os.WriteFile(p, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // WriteFile is subject to umask
		t.Fatal(err)
	}
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
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
			return p
		}, Stale},
		{"stale garbage is stale", func(t *testing.T, dir string) string {
			p := write(t, dir, "garbage", 0o600)
			old := start.Add(-time.Hour)
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
			return p
		}, Stale},
		{"group writable", func(t *testing.T, dir string) string { return write(t, dir, good, 0o620) }, Untrusted},
		{"world writable", func(t *testing.T, dir string) string { return write(t, dir, good, 0o602) }, Untrusted},
		{"symlink to a good file", func(t *testing.T, dir string) string {
			target := write(t, dir, good, 0o600)
			link := filepath.Join(dir, "link.json")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			return link
		}, Untrusted},
		{"directory", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "d")
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
			return p
		}, Untrusted},
		{"fifo", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "fifo")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatalf("Mkfifo(%q): %v", p, err)
			}
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
				if f.Status != tc.want {
					t.Errorf("Inspect(%q).Status = %q, want %q", p, f.Status, tc.want)
				}
				if tc.want == Used {
					if f.Code.Name != codes.ListenerBindFailed {
						t.Errorf("Inspect(%q).Code.Name = %q, want %q", p, f.Code.Name, codes.ListenerBindFailed)
					}
				} else if f.Code != (codes.Code{}) {
					t.Errorf("Inspect(%q).Code = %+v, want the zero Code", p, f.Code)
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
	if err := os.Chown(p, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if got, want := Inspect(p, time.Now().Add(-time.Minute)).Status, Untrusted; got != want {
		t.Errorf("Inspect of a file owned by another user: Status = %q, want %q", got, want)
	}
}

// A file written earlier in the same wall-clock second as the run's start
// counts as fresh, because some file systems keep whole seconds only.
func TestInspectFreshnessUsesWholeSeconds(t *testing.T) {
	p := write(t, t.TempDir(), good, 0o600)
	sec := time.Now().Truncate(time.Second)
	if err := os.Chtimes(p, sec, sec); err != nil {
		t.Fatal(err)
	}
	if got, want := Inspect(p, sec.Add(900*time.Millisecond)).Status, Used; got != want {
		t.Errorf("Inspect(mtime %v, start %v).Status = %q, want %q", sec, sec.Add(900*time.Millisecond), got, want)
	}
	if got, want := Inspect(p, sec.Add(time.Second)).Status, Stale; got != want {
		t.Errorf("Inspect(mtime %v, start %v).Status = %q, want %q", sec, sec.Add(time.Second), got, want)
	}
}
