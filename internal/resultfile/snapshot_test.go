//go:build unix

package resultfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
)

// replace writes body the way ctrld does: a new file, then a rename over
// the old name.
func replace(t *testing.T, p, body string, mtime time.Time) {
	t.Helper()
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}

func TestSnapshot(t *testing.T) {
	t.Parallel()
	past := time.Now().Add(-24 * time.Hour)
	future := time.Now().Add(24 * time.Hour)
	for _, tc := range []struct {
		name   string
		before func(t *testing.T, p string) // the state when Snapshot is taken
		during func(t *testing.T, p string) // what the attempt did
		want   outcome.FileState
	}{
		{"nothing before, nothing after", nil, nil, outcome.FileAbsent},
		{"nothing before, written during", nil, func(t *testing.T, p string) { write(t, filepath.Dir(p), good, 0o600) }, outcome.FileUsed},
		{"nothing before, written during with a date in the past", nil, func(t *testing.T, p string) {
			replace(t, p, good, past) // the clock went back since the run started
		}, outcome.FileUsed},
		{"left from an earlier run, untouched", func(t *testing.T, p string) {
			write(t, filepath.Dir(p), good, 0o600)
			if err := os.Chtimes(p, past, past); err != nil {
				t.Fatal(err)
			}
		}, nil, outcome.FileStale},
		{"left from an earlier run, dated in the future", func(t *testing.T, p string) {
			write(t, filepath.Dir(p), good, 0o600)
			if err := os.Chtimes(p, future, future); err != nil {
				t.Fatal(err)
			}
		}, nil, outcome.FileStale},
		{"left from an earlier run just now", func(t *testing.T, p string) { write(t, filepath.Dir(p), good, 0o600) }, nil, outcome.FileStale},
		{"left from an earlier run, garbage", func(t *testing.T, p string) { write(t, filepath.Dir(p), "garbage", 0o600) }, nil, outcome.FileStale},
		{"left from an earlier run, replaced during", func(t *testing.T, p string) {
			write(t, filepath.Dir(p), good, 0o600)
			if err := os.Chtimes(p, future, future); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, p string) { replace(t, p, good, past) }, outcome.FileUsed},
		{"left from an earlier run, rewritten in place", func(t *testing.T, p string) {
			write(t, filepath.Dir(p), good[:len(good)-1]+`,"x":1}`, 0o600)
			if err := os.Chtimes(p, future, future); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte(good), 0o600); err != nil {
				t.Fatal(err)
			}
		}, outcome.FileUsed},
		{"left from an earlier run, removed during", func(t *testing.T, p string) { write(t, filepath.Dir(p), good, 0o600) },
			func(t *testing.T, p string) {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}, outcome.FileAbsent},
		{"replaced during by a symlink", func(t *testing.T, p string) { write(t, filepath.Dir(p), good, 0o600) },
			func(t *testing.T, p string) {
				target := filepath.Join(t.TempDir(), "x.json")
				if err := os.WriteFile(target, []byte(good), 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, p); err != nil {
					t.Fatal(err)
				}
			}, outcome.FileUntrusted},
		{"a fifo before and after", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatalf("Mkfifo(%q): %v", p, err)
			}
		}, nil, outcome.FileUntrusted},
		{"written during, group writable", nil, func(t *testing.T, p string) { write(t, filepath.Dir(p), good, 0o660) }, outcome.FileUntrusted},
		{"written during, not a registered failure", nil, func(t *testing.T, p string) { write(t, filepath.Dir(p), `{"version":1}`, 0o600) }, outcome.FileInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "provision_result.json")
			if tc.before != nil {
				tc.before(t, p)
			}
			b := Snapshot(p)
			if tc.during != nil {
				tc.during(t, p)
			}
			done := make(chan Finding, 1)
			go func() { done <- b.Inspect() }()
			select {
			case f := <-done:
				if f.State != tc.want {
					t.Errorf("Inspect().State = %q, want %q", f.State, tc.want)
				}
				if tc.want == outcome.FileUsed && f.Code.Name != codes.ListenerBindFailed {
					t.Errorf("Inspect().Code.Name = %q, want %q", f.Code.Name, codes.ListenerBindFailed)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Inspect blocked")
			}
		})
	}
}

// The same file with the same size and modification time, rewritten in
// place, is told apart by its change time, which no one can set back.
func TestSnapshotSeesAnInPlaceRewriteOfTheSameSize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := write(t, dir, good, 0o600)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	b := Snapshot(p)
	time.Sleep(20 * time.Millisecond)
	if err := os.WriteFile(p, []byte(good), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	if got, want := b.Inspect().State, outcome.FileUsed; got != want {
		t.Errorf("Inspect() after an in-place rewrite: State = %q, want %q", got, want)
	}
}

// A path that could not be examined before proves nothing new.
func TestSnapshotUnknownIsStale(t *testing.T) {
	t.Parallel()
	p := write(t, t.TempDir(), good, 0o600)
	if got, want := (Before{path: p, state: unknown}).Inspect().State, outcome.FileStale; got != want {
		t.Errorf("Before{state: unknown}.Inspect().State = %q, want %q", got, want)
	}
}

// The zero Before holds no path; it finds nothing rather than panicking.
func TestZeroBefore(t *testing.T) {
	t.Parallel()
	if got, want := (Before{}).Inspect().State, outcome.FileAbsent; got != want {
		t.Errorf("Before{}.Inspect().State = %q, want %q", got, want)
	}
}

// A file dated in the future is still stale when it was there before.
func TestInspectIgnoresTheClock(t *testing.T) {
	t.Parallel()
	p := write(t, t.TempDir(), good, 0o600)
	future := time.Now().Add(24 * time.Hour)
	if err := os.Chtimes(p, future, future); err != nil {
		t.Fatal(err)
	}
	if got, want := Snapshot(p).Inspect().State, outcome.FileStale; got != want {
		t.Errorf("Snapshot(future-dated file).Inspect().State = %q, want %q", got, want)
	}
}
