//go:build unix

package resultfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
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
		want   Status
	}{
		{"nothing before, nothing after", nil, nil, Absent},
		{"nothing before, written during", nil, func(t *testing.T, p string) { write(t, filepath.Dir(p), good, 0o600) }, Used},
		{"nothing before, written during with a date in the past", nil, func(t *testing.T, p string) {
			replace(t, p, good, past) // the clock went back since the run started
		}, Used},
		{"left from an earlier run, untouched", func(t *testing.T, p string) {
			write(t, filepath.Dir(p), good, 0o600)
			if err := os.Chtimes(p, past, past); err != nil {
				t.Fatal(err)
			}
		}, nil, Stale},
		{"left from an earlier run, dated in the future", func(t *testing.T, p string) {
			write(t, filepath.Dir(p), good, 0o600)
			if err := os.Chtimes(p, future, future); err != nil {
				t.Fatal(err)
			}
		}, nil, Stale},
		{"left from an earlier run just now", func(t *testing.T, p string) { write(t, filepath.Dir(p), good, 0o600) }, nil, Stale},
		{"left from an earlier run, garbage", func(t *testing.T, p string) { write(t, filepath.Dir(p), "garbage", 0o600) }, nil, Stale},
		{"left from an earlier run, replaced during", func(t *testing.T, p string) {
			write(t, filepath.Dir(p), good, 0o600)
			if err := os.Chtimes(p, future, future); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, p string) { replace(t, p, good, past) }, Used},
		{"left from an earlier run, rewritten in place", func(t *testing.T, p string) {
			write(t, filepath.Dir(p), good[:len(good)-1]+`,"x":1}`, 0o600)
			if err := os.Chtimes(p, future, future); err != nil {
				t.Fatal(err)
			}
		}, func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte(good), 0o600); err != nil {
				t.Fatal(err)
			}
		}, Used},
		{"left from an earlier run, removed during", func(t *testing.T, p string) { write(t, filepath.Dir(p), good, 0o600) },
			func(t *testing.T, p string) {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}, Absent},
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
			}, Untrusted},
		{"a fifo before and after", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatalf("Mkfifo(%q): %v", p, err)
			}
		}, nil, Untrusted},
		{"written during, group writable", nil, func(t *testing.T, p string) { write(t, filepath.Dir(p), good, 0o660) }, Untrusted},
		{"written during, not a registered failure", nil, func(t *testing.T, p string) { write(t, filepath.Dir(p), `{"version":1}`, 0o600) }, Invalid},
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
				if f.Status != tc.want {
					t.Errorf("Inspect().Status = %q, want %q", f.Status, tc.want)
				}
				if tc.want == Used && f.Code.Name != codes.ListenerBindFailed {
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
	if got, want := b.Inspect().Status, Used; got != want {
		t.Errorf("Inspect() after an in-place rewrite: Status = %q, want %q", got, want)
	}
}

// A path that could not be examined before proves nothing new.
func TestSnapshotUnknownIsStale(t *testing.T) {
	t.Parallel()
	p := write(t, t.TempDir(), good, 0o600)
	if got, want := (Before{path: p, state: unknown}).Inspect().Status, Stale; got != want {
		t.Errorf("Before{state: unknown}.Inspect().Status = %q, want %q", got, want)
	}
}

// The zero Before holds no path; it finds nothing rather than panicking.
func TestZeroBefore(t *testing.T) {
	t.Parallel()
	if got, want := (Before{}).Inspect().Status, Absent; got != want {
		t.Errorf("Before{}.Inspect().Status = %q, want %q", got, want)
	}
}

// What the old rule got wrong: the package-level Inspect takes a file
// dated in the future for this run's.
func TestInspectSinceTrustsTheClock(t *testing.T) {
	t.Parallel()
	p := write(t, t.TempDir(), good, 0o600)
	future := time.Now().Add(24 * time.Hour)
	if err := os.Chtimes(p, future, future); err != nil {
		t.Fatal(err)
	}
	b := Snapshot(p)
	if got, want := Inspect(p, time.Now()).Status, Used; got != want {
		t.Errorf("Inspect(future-dated file, now).Status = %q, want %q", got, want)
	}
	if got, want := b.Inspect().Status, Stale; got != want {
		t.Errorf("Snapshot(future-dated file).Inspect().Status = %q, want %q", got, want)
	}
}
