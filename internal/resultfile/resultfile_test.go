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
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
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
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string) string
		want  outcome.FileState
	}{
		{"absent", func(t *testing.T, dir string) string { return filepath.Join(dir, "nope.json") }, outcome.FileAbsent},
		{"parent is a file", func(t *testing.T, dir string) string {
			return filepath.Join(write(t, dir, good, 0o600), "x")
		}, outcome.FileAbsent},
		{"fresh and valid", func(t *testing.T, dir string) string { return write(t, dir, good, 0o600) }, outcome.FileUsed},
		{"world readable is fine", func(t *testing.T, dir string) string { return write(t, dir, good, 0o644) }, outcome.FileUsed},
		{"group writable", func(t *testing.T, dir string) string { return write(t, dir, good, 0o620) }, outcome.FileUntrusted},
		{"world writable", func(t *testing.T, dir string) string { return write(t, dir, good, 0o602) }, outcome.FileUntrusted},
		{"symlink to a good file", func(t *testing.T, dir string) string {
			target := write(t, dir, good, 0o600)
			link := filepath.Join(dir, "link.json")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			return link
		}, outcome.FileUntrusted},
		{"directory", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "d")
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
			return p
		}, outcome.FileUntrusted},
		{"fifo", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "fifo")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatalf("Mkfifo(%q): %v", p, err)
			}
			return p
		}, outcome.FileUntrusted},
		{"10 MB", func(t *testing.T, dir string) string {
			return write(t, dir, good[:len(good)-1]+`,"x":"`+strings.Repeat("a", 10<<20)+`"}`, 0o600)
		}, outcome.FileUntrusted},
		{"truncated json", func(t *testing.T, dir string) string { return write(t, dir, good[:40], 0o600) }, outcome.FileInvalid},
		{"unknown code", func(t *testing.T, dir string) string {
			return write(t, dir, strings.Replace(good, "LISTENER_BIND_FAILED", "CANARYTOKEN0123456789", 1), 0o600)
		}, outcome.FileInvalid},
		{"exit disagrees", func(t *testing.T, dir string) string {
			return write(t, dir, strings.Replace(good, `"exit_code":41`, `"exit_code":42`, 1), 0o600)
		}, outcome.FileInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.setup(t, t.TempDir())
			done := make(chan Finding, 1)
			go func() { done <- (Before{path: p}).Inspect() }() // nothing was there before
			select {
			case f := <-done:
				if f.State != tc.want {
					t.Errorf("Inspect(%q).State = %q, want %q", p, f.State, tc.want)
				}
				if tc.want == outcome.FileUsed {
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
	if got, want := (Before{path: p}).Inspect().State, outcome.FileUntrusted; got != want {
		t.Errorf("Inspect of a file owned by another user: State = %q, want %q", got, want)
	}
}
