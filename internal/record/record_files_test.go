//go:build unix

package record

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

func okRecord(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), FileName)
	if err := Write(p, New(summary(codes.OK), time.Now())); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return p
}

func readWithin(t *testing.T, p string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := Read(p)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("Read blocked")
		return nil
	}
}

func TestReadRefusesWhatItDidNotWrite(t *testing.T) {
	t.Parallel()
	for name, plant := range map[string]func(t *testing.T, p string){
		"fifo": func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"symlink to a good record": func(t *testing.T, p string) {
			if err := os.Symlink(okRecord(t), p); err != nil {
				t.Fatal(err)
			}
		},
		"directory": func(t *testing.T, p string) {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		},
		"group writable": func(t *testing.T, p string) {
			if err := os.Rename(okRecord(t), p); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, 0o664); err != nil {
				t.Fatal(err)
			}
		},
		"world writable": func(t *testing.T, p string) {
			if err := os.Rename(okRecord(t), p); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, 0o646); err != nil {
				t.Fatal(err)
			}
		},
		"over 64 KiB": func(t *testing.T, p string) {
			b, err := os.ReadFile(okRecord(t))
			if err != nil {
				t.Fatal(err)
			}
			b = append(b[:len(b)-2], []byte(`,"x":"`+strings.Repeat("a", 64<<10)+`"}`)...)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), FileName)
			plant(t, p)
			if err := readWithin(t, p); !errors.Is(err, ErrInvalid) {
				t.Errorf("Read: %v, want %v", err, ErrInvalid)
			}
		})
	}
}

// The owner is a parameter, so the refusal shows as root and as anyone.
func TestReadOwner(t *testing.T) {
	t.Parallel()
	p := okRecord(t)
	if _, err := read(p, os.Geteuid()); err != nil {
		t.Fatalf("read as the owner: %v", err)
	}
	if os.Geteuid() != 0 {
		if _, err := read(p, os.Geteuid()+1); !errors.Is(err, ErrInvalid) {
			t.Errorf("read of another user's record: %v, want %v", err, ErrInvalid)
		}
		return
	}
	if _, err := read(p, 1000); err != nil {
		t.Errorf("read of root's record as uid 1000: %v, want no error: root's record is read by anyone", err)
	}
	if err := os.Chown(p, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := read(p, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("read of uid 65534's record as root: %v, want %v: root does not take a user's record as its own", err, ErrInvalid)
	}
	if _, err := read(p, 65534); err != nil {
		t.Errorf("read of uid 65534's record as uid 65534: %v, want no error: a user reads their own (a --simulate home)", err)
	}
}

func TestWriteModeIgnoresUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	p := filepath.Join(t.TempDir(), FileName)
	if err := WriteUnsynced(p, New(summary(codes.OK), time.Now())); err != nil {
		t.Fatalf("WriteUnsynced: %v", err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fi.Mode().Perm(), os.FileMode(0o644); got != want {
		t.Errorf("mode of the record under umask 077 = %v, want %v", got, want)
	}
}
