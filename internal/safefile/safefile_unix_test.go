//go:build unix

package safefile

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, p string, mode fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(p, []byte("x\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func TestOpenRules(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	write(t, plain, 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(plain, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(dir, "shared")
	write(t, shared, 0o666)
	hard := filepath.Join(dir, "hard")
	write(t, hard, 0o644)
	if err := os.Link(hard, filepath.Join(dir, "hard2")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		path string
		r    Rules
		want error // nil: opens
	}{
		{"a regular file", plain, Rules{Owner: AnyOwner}, nil},
		{"a link is refused", link, Rules{Owner: AnyOwner}, ErrLink},
		{"a link the admin named is followed", link, Rules{Owner: AnyOwner, Follow: true}, nil},
		{"a FIFO does not block and is refused", fifo, Rules{Owner: AnyOwner}, ErrNotRegular},
		{"a FIFO is accepted for a secret", fifo, Rules{Owner: AnyOwner, AnyKind: true}, nil},
		{"a directory is refused", dir, Rules{Owner: AnyOwner}, ErrNotRegular},
		{"a directory is refused for a secret", dir, Rules{Owner: AnyOwner, AnyKind: true}, ErrNotRegular},
		{"a file others may write is refused when private", shared, Rules{Owner: AnyOwner, Private: true}, ErrUntrusted},
		{"a file others may write opens when not private", shared, Rules{Owner: AnyOwner}, nil},
		{"a second name is refused with OneLink", hard, Rules{Owner: AnyOwner, OneLink: true}, ErrUntrusted},
		{"a second name opens without OneLink", hard, Rules{Owner: AnyOwner}, nil},
		{"missing", filepath.Join(dir, "none"), Rules{Owner: AnyOwner}, fs.ErrNotExist},
		{"below a file", filepath.Join(plain, "x"), Rules{Owner: AnyOwner}, fs.ErrNotExist},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, _, err := Open(c.path, c.r)
			if c.want == nil {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				f.Close()
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("Open: %v, want %v", err, c.want)
			}
			if f != nil {
				t.Fatal("a refused file was returned")
			}
		})
	}
}

func TestOwner(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	write(t, p, 0o644)
	if os.Geteuid() == 0 {
		if err := os.Chown(p, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Open(p, Rules{Owner: 0}); !errors.Is(err, ErrUntrusted) {
			t.Fatalf("another user's file: %v, want ErrUntrusted", err)
		}
		f, _, err := Open(p, Rules{Owner: 4242})
		if err != nil {
			t.Fatalf("the named owner's file: %v", err)
		}
		f.Close()
		return
	}
	// Not root: the file is the test's own, and root's would be trusted too.
	if _, _, err := Open(p, Rules{Owner: os.Geteuid() + 1}); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("a file of neither root nor the owner named: %v, want ErrUntrusted", err)
	}
}

func TestFixMode(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	f, fi, err := OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666, Rules{Owner: Self(), Private: true, FixMode: 0o600})
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", fi.Mode().Perm())
	}
	if _, _, err := OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600, Rules{Owner: Self()}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("O_EXCL on an existing file: %v", err)
	}
}

func TestOpenDir(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "l")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, err := OpenDir(link); !errors.Is(err, ErrLink) {
		t.Fatalf("a link to a directory: %v, want ErrLink", err)
	}
}

// A read that never returns, as on a stalled mount or /proc/kmsg, ends with
// the context; a FIFO with a writer that writes nothing reads that way.
func TestOpenContextEndsWithTheContext(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(fifo, os.O_RDWR, 0) // a writer that never writes
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	began := time.Now()
	err = OpenContext(ctx, fifo, Rules{Owner: AnyOwner, AnyKind: true}, func(f *os.File, _ fs.FileInfo) error {
		_, err := io.ReadAll(f)
		return err
	})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("OpenContext: %v, want the deadline", err)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("OpenContext returned after %v", d)
	}
}

func TestOpenContextReads(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	write(t, p, 0o644)
	var got []byte
	err := OpenContext(context.Background(), p, Rules{Owner: AnyOwner}, func(f *os.File, _ fs.FileInfo) error {
		var err error
		got, err = io.ReadAll(f)
		return err
	})
	if err != nil || string(got) != "x\n" {
		t.Fatalf("OpenContext: %q, %v", got, err)
	}
}
