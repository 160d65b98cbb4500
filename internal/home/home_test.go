//go:build unix

package home

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// canary is in every path, and must be in no error.
const canary = "CANARYPATH0123456789"

var self = Checker{UID: os.Geteuid()}

func mkdir(t *testing.T, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), canary)
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) string
		want  error
		text  string
	}{
		{"0755", func(t *testing.T) string { return mkdir(t, 0o755) }, nil, ""},
		{"0750 as ctrld makes it", func(t *testing.T) string { return mkdir(t, 0o750) }, nil, ""},
		{"0700", func(t *testing.T) string { return mkdir(t, 0o700) }, nil, ""},
		{"group writable", func(t *testing.T) string { return mkdir(t, 0o775) }, ErrWritable,
			"the home directory (--home) is writable by group or others"},
		{"world writable", func(t *testing.T) string { return mkdir(t, 0o757) }, ErrWritable, ""},
		{"sticky and world writable", func(t *testing.T) string { return mkdir(t, 0o1777) }, ErrWritable, ""},
		{"symlink to a good home", func(t *testing.T) string {
			link := filepath.Join(t.TempDir(), canary+"-link")
			if err := os.Symlink(mkdir(t, 0o755), link); err != nil {
				t.Fatal(err)
			}
			return link
		}, ErrSymlink, "the home directory (--home) is a symbolic link"},
		{"dangling symlink", func(t *testing.T) string {
			link := filepath.Join(t.TempDir(), canary)
			if err := os.Symlink(filepath.Join(t.TempDir(), "nowhere"), link); err != nil {
				t.Fatal(err)
			}
			return link
		}, ErrSymlink, ""},
		{"regular file", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), canary)
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, ErrNotDir, "the home directory (--home) is not a directory"},
		{"fifo", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), canary)
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}, ErrNotDir, ""},
		{"missing", func(t *testing.T) string { return filepath.Join(t.TempDir(), canary) }, ErrMissing,
			"the home directory (--home) does not exist"},
		{"parent is a file", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), canary)
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(p, "home")
		}, ErrUnreadable, "the home directory (--home) cannot be examined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := tc.setup(t)
			err := self.Check(dir)
			if tc.want == nil {
				if err != nil {
					t.Errorf("Check(%q): %v", dir, err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("Check(%q) = %v, want %v", dir, err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), canary) {
				t.Errorf("Check(%q) = %q: the error holds the path", dir, err)
			}
			if tc.text != "" && (err == nil || err.Error() != tc.text) {
				t.Errorf("Check(%q) = %v, want error %q", dir, err, tc.text)
			}
		})
	}
}

func TestCheckMissingIsNotExist(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), canary)
	if err := self.Check(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Check(%q) = %v, want %v", dir, err, fs.ErrNotExist)
	}
}

// The owner is a parameter, so both answers can be seen without root.
func TestCheckOwner(t *testing.T) {
	t.Parallel()
	dir := mkdir(t, 0o755)
	other := Checker{UID: os.Geteuid() + 1}
	err := other.Check(dir)
	if !errors.Is(err, ErrNotOwned) {
		t.Errorf("Checker{UID: %d}.Check(%q) = %v, want %v", other.UID, dir, err, ErrNotOwned)
	}
	if want := "the home directory (--home) is not owned by root"; err == nil || err.Error() != want {
		t.Errorf("Checker{UID: %d}.Check(%q) = %v, want error %q", other.UID, dir, err, want)
	}
	if err := (Checker{UID: os.Geteuid()}).Check(dir); err != nil {
		t.Errorf("Checker{UID: %d}.Check(%q): %v", os.Geteuid(), dir, err)
	}
}

func TestCheckRefusesAUsersHomeAsRoot(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("changing a directory's owner needs root")
	}
	dir := mkdir(t, 0o755)
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if err := Default.Check(dir); !errors.Is(err, ErrNotOwned) {
		t.Errorf("Check(%q) = %v, want %v", dir, err, ErrNotOwned)
	}
	if err := Prepare(dir); !errors.Is(err, ErrNotOwned) {
		t.Errorf("Prepare(%q) = %v, want %v", dir, err, ErrNotOwned)
	}
}

func TestDefaultIsRoot(t *testing.T) {
	t.Parallel()
	if got, want := Default.UID, 0; got != want {
		t.Errorf("Default.UID = %d, want %d", got, want)
	}
	dir := mkdir(t, 0o755)
	if os.Geteuid() == 0 {
		if err := Default.Check(dir); err != nil {
			t.Errorf("Check(%q) as root: %v", dir, err)
		}
	} else {
		if err := Default.Check(dir); !errors.Is(err, ErrNotOwned) {
			t.Errorf("Check(%q) as uid %d = %v, want %v", dir, os.Geteuid(), err, ErrNotOwned)
		}
	}
}

// Prepare creates the home and its parents 0755 whatever the umask, so
// status can reach the record as any user.
func TestPrepareCreatesWithParents(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b", canary)
	if err := self.Prepare(dir); err != nil {
		t.Fatalf("Prepare(%q): %v", dir, err)
	}
	for _, p := range []string{filepath.Join(root, "a"), filepath.Join(root, "a", "b"), dir} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.IsDir() {
			t.Errorf("%s: mode %v, want a directory", p, fi.Mode())
		}
		if got, want := fi.Mode().Perm(), os.FileMode(0o755); got != want {
			t.Errorf("%s: permissions %v, want %v", p, got, want)
		}
	}
	if err := self.Prepare(dir); err != nil {
		t.Fatalf("Prepare(%q) a second time: %v; a second run should find it ready", dir, err)
	}
}

func TestPrepareLeavesAnExistingHomeAlone(t *testing.T) {
	t.Parallel()
	dir := mkdir(t, 0o777)
	if err := self.Prepare(dir); !errors.Is(err, ErrWritable) {
		t.Errorf("Prepare(%q) = %v, want %v", dir, err, ErrWritable)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fi.Mode().Perm(), os.FileMode(0o777); got != want {
		t.Errorf("after Prepare, permissions %v, want %v: not repaired behind the admin's back", got, want)
	}

	link := filepath.Join(t.TempDir(), canary)
	if err := os.Symlink(filepath.Join(t.TempDir(), "target"), link); err != nil {
		t.Fatal(err)
	}
	if err := self.Prepare(link); !errors.Is(err, ErrSymlink) {
		t.Errorf("Prepare(%q) = %v, want %v: a dangling link is not followed to create its target", link, err, ErrSymlink)
	}
	target := filepath.Join(filepath.Dir(link), "target")
	if _, err := os.Lstat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Lstat(%q) = %v, want %v", target, err, fs.ErrNotExist)
	}
}

func TestPrepareCannotCreate(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), canary)
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(file, "home")
	err := self.Prepare(dir)
	if !errors.Is(err, ErrCreate) {
		t.Errorf("Prepare(%q) = %v, want %v", dir, err, ErrCreate)
	}
	if want := "the home directory (--home) cannot be created"; err == nil || err.Error() != want {
		t.Errorf("Prepare(%q) = %v, want error %q", dir, err, want)
	}
}
