package safefile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// A file opened for reading shares delete: it can be renamed and removed
// under the reader, which still reads what it opened.
func TestOpenSharesDelete(t *testing.T) {
	dir := wine.TempDir(t)
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("content"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, _, err := Open(p, Rules{Owner: Self(), Private: true})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := os.Rename(p, p+".moved"); err != nil {
		t.Errorf("renaming a file Open holds: %v", err)
	}
	if err := os.Remove(p + ".moved"); err != nil {
		t.Errorf("removing a file Open holds: %v", err)
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil || string(b) != "content" {
		t.Errorf("reading after the rename and removal: %q, %v; want \"content\"", b, err)
	}
}

func TestOpenRefusesOnWindows(t *testing.T) {
	dir := wine.TempDir(t)
	if _, _, err := Open(filepath.Join(dir, "missing"), Rules{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open(missing) = %v, want fs.ErrNotExist", err)
	}
	if _, _, err := Open(dir, Rules{}); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Open(a directory) = %v, want ErrNotRegular", err)
	}
	// A device: refused, whether by its open or by its type.
	if f, _, err := Open(`\\.\NUL`, Rules{}); err == nil {
		f.Close()
		t.Errorf("Open(NUL) succeeded, want an error")
	}
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "hardlink")
	if err := os.Link(target, link); err != nil {
		t.Fatal(err)
	}
	if _, _, err := OpenFile(link, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640, Rules{OneLink: true}); !errors.Is(err, ErrUntrusted) {
		t.Errorf("OpenFile(a hard link, OneLink) = %v, want ErrUntrusted", err)
	}
	if f, _, err := Open(link, Rules{}); err != nil {
		t.Errorf("Open(a hard link) without OneLink: %v", err)
	} else {
		f.Close()
	}
}

// A symbolic link is refused unless followed.
func TestOpenRefusesALinkOnWindows(t *testing.T) {
	wine.Skip(t, wine.NoSymlinks)
	dir := wine.TempDir(t)
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot make a symbolic link here (needs the privilege or developer mode): %v", err)
	}
	if _, _, err := Open(link, Rules{}); !errors.Is(err, ErrLink) {
		t.Errorf("Open(a symbolic link) = %v, want ErrLink", err)
	}
	f, _, err := Open(link, Rules{Follow: true})
	if err != nil {
		t.Errorf("Open(a symbolic link, Follow): %v", err)
	} else {
		f.Close()
	}
}
