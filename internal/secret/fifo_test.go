//go:build unix

package secret

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openWriter opens the FIFO for writing once a reader has it open, giving
// up after a few seconds instead of blocking a test forever.
func openWriter(p string) (*os.File, error) {
	deadline := time.Now().Add(3 * time.Second)
	for {
		fd, err := syscall.Open(p, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err == nil {
			return os.NewFile(uintptr(fd), p), nil
		}
		if err != syscall.ENXIO || time.Now().After(deadline) {
			return nil, err
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func mkfifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "token.fifo")
	require.NoError(t, syscall.Mkfifo(p, 0o600))
	return p
}

// `mkfifo f; ctrld-install --token-file f` with nobody writing f.
func TestFIFOWithoutWriter(t *testing.T) {
	t.Parallel()
	p := mkfifo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	waitOrFail(t, 5*time.Second, func() {
		_, err := Read(ctx, File(Token, p))
		assert.ErrorIs(t, err, ErrTimeout)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.EqualError(t, err, "the token file gave no line before the time limit")
	})
	assert.Less(t, time.Since(t0), 2*time.Second)
}

func TestFIFOInterrupted(t *testing.T) {
	t.Parallel()
	p := mkfifo(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	waitOrFail(t, 5*time.Second, func() {
		_, err := Read(ctx, File(Resolver, p))
		assert.ErrorIs(t, err, ErrTimeout)
		assert.ErrorIs(t, err, context.Canceled)
		assert.EqualError(t, err, "reading the resolver ID file was interrupted")
	})
}

// A writer that connects, sends part of a line and then stalls with the
// FIFO open: the read waits in the poller, and closing the file ends it.
func TestFIFOWriterStalls(t *testing.T) {
	t.Parallel()
	p := mkfifo(t)
	writerOpen := make(chan *os.File, 1)
	go func() {
		w, err := openWriter(p)
		if err == nil {
			w.WriteString("CANARY")
		}
		writerOpen <- w
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	waitOrFail(t, 5*time.Second, func() {
		_, err := Read(ctx, File(Token, p))
		assert.ErrorIs(t, err, ErrTimeout)
	})
	if w := <-writerOpen; w != nil {
		w.Close()
	}
}

// The writer comes after the reader opened the FIFO, as with
// `ctrld-install --token-file f & echo TOKEN > f`.
func TestFIFOWriterComesLater(t *testing.T) {
	t.Parallel()
	p := mkfifo(t)
	go func() {
		time.Sleep(100 * time.Millisecond)
		w, err := openWriter(p)
		if err != nil {
			return
		}
		defer w.Close()
		w.WriteString(canary + "\n")
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, err := Read(ctx, File(Token, p))
	require.NoError(t, err)
	assert.Equal(t, canary, v)
}

// A writer that sends its line without a line end and closes.
func TestFIFOWriterClosesWithoutNewline(t *testing.T) {
	t.Parallel()
	p := mkfifo(t)
	go func() {
		w, err := openWriter(p)
		if err != nil {
			return
		}
		w.WriteString(canary)
		w.Close()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, err := Read(ctx, File(Token, p))
	require.NoError(t, err)
	assert.Equal(t, canary, v)
}

// A writer that keeps the FIFO open after its line.
func TestFIFOWriterStaysOpen(t *testing.T) {
	t.Parallel()
	p := mkfifo(t)
	release := make(chan struct{})
	defer close(release)
	go func() {
		w, err := openWriter(p)
		if err != nil {
			return
		}
		defer w.Close()
		w.WriteString(canary + "\n")
		<-release
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	t0 := time.Now()
	v, err := Read(ctx, File(Token, p))
	require.NoError(t, err)
	assert.Equal(t, canary, v)
	assert.Less(t, time.Since(t0), 3*time.Second)
}

// The descriptor is closed when Read gives up, so a run does not keep
// the FIFO open.
func TestFIFOClosedAfterTimeout(t *testing.T) {
	p := mkfifo(t)
	before := openFDs(t)
	for range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		_, err := Read(ctx, File(Token, p))
		cancel()
		require.ErrorIs(t, err, ErrTimeout)
	}
	time.Sleep(100 * time.Millisecond)
	assert.LessOrEqual(t, openFDs(t), before+1)
}

func openFDs(t *testing.T) int {
	t.Helper()
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		if es, err := os.ReadDir(dir); err == nil {
			return len(es)
		}
	}
	t.Skip("no descriptor listing on this system")
	return 0
}
