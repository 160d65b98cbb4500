//go:build unix

package record

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

func okRecord(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), FileName)
	require.NoError(t, Write(p, New(summary(codes.OK), time.Now())))
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
		"fifo": func(t *testing.T, p string) { require.NoError(t, syscall.Mkfifo(p, 0o644)) },
		"symlink to a good record": func(t *testing.T, p string) {
			require.NoError(t, os.Symlink(okRecord(t), p))
		},
		"directory": func(t *testing.T, p string) { require.NoError(t, os.Mkdir(p, 0o755)) },
		"group writable": func(t *testing.T, p string) {
			require.NoError(t, os.Rename(okRecord(t), p))
			require.NoError(t, os.Chmod(p, 0o664))
		},
		"world writable": func(t *testing.T, p string) {
			require.NoError(t, os.Rename(okRecord(t), p))
			require.NoError(t, os.Chmod(p, 0o646))
		},
		"over 64 KiB": func(t *testing.T, p string) {
			b, err := os.ReadFile(okRecord(t))
			require.NoError(t, err)
			b = append(b[:len(b)-2], []byte(`,"x":"`+strings.Repeat("a", 64<<10)+`"}`)...)
			require.NoError(t, os.WriteFile(p, b, 0o644))
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), FileName)
			plant(t, p)
			assert.ErrorIs(t, readWithin(t, p), ErrInvalid)
		})
	}
}

// The owner is a parameter, so the refusal shows as root and as anyone.
func TestReadOwner(t *testing.T) {
	t.Parallel()
	p := okRecord(t)
	_, err := read(p, os.Geteuid())
	require.NoError(t, err)
	if os.Geteuid() != 0 {
		_, err = read(p, os.Geteuid()+1)
		assert.ErrorIs(t, err, ErrInvalid, "another user's record")
		return
	}
	_, err = read(p, 1000)
	assert.NoError(t, err, "root's record is read by anyone")
	require.NoError(t, os.Chown(p, 65534, 65534))
	_, err = read(p, 0)
	assert.ErrorIs(t, err, ErrInvalid, "root does not take a user's record as its own")
	_, err = read(p, 65534)
	assert.NoError(t, err, "a user reads their own (a --simulate home)")
}

func TestWriteModeIgnoresUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	p := filepath.Join(t.TempDir(), FileName)
	require.NoError(t, WriteUnsynced(p, New(summary(codes.OK), time.Now())))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
}
