//go:build unix

package secret

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
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
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatalf("Mkfifo(%q): %v", p, err)
	}
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
		if !errors.Is(err, ErrTimeout) {
			t.Errorf("Read(FIFO without writer) error = %v, want ErrTimeout", err)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Read(FIFO without writer) error = %v, want context.DeadlineExceeded", err)
		}
		if want := "the token file gave no line before the time limit"; err == nil || err.Error() != want {
			t.Errorf("Read(FIFO without writer) error = %v, want %q", err, want)
		}
	})
	if d := time.Since(t0); d >= 2*time.Second {
		t.Errorf("Read(FIFO without writer) took %v, want less than 2s", d)
	}
}

func TestFIFOInterrupted(t *testing.T) {
	t.Parallel()
	p := mkfifo(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	waitOrFail(t, 5*time.Second, func() {
		_, err := Read(ctx, File(Resolver, p))
		if !errors.Is(err, ErrTimeout) {
			t.Errorf("Read(FIFO, cancelled) error = %v, want ErrTimeout", err)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Read(FIFO, cancelled) error = %v, want context.Canceled", err)
		}
		if want := "reading the resolver ID file was interrupted"; err == nil || err.Error() != want {
			t.Errorf("Read(FIFO, cancelled) error = %v, want %q", err, want)
		}
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
		if !errors.Is(err, ErrTimeout) {
			t.Errorf("Read(FIFO, stalled writer) error = %v, want ErrTimeout", err)
		}
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
	if err != nil {
		t.Fatalf("Read(FIFO, late writer): %v", err)
	}
	if v != canary {
		t.Errorf("Read(FIFO, late writer) = %q, want %q", v, canary)
	}
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
	if err != nil {
		t.Fatalf("Read(FIFO, no line end): %v", err)
	}
	if v != canary {
		t.Errorf("Read(FIFO, no line end) = %q, want %q", v, canary)
	}
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
	if err != nil {
		t.Fatalf("Read(FIFO, writer stays open): %v", err)
	}
	if v != canary {
		t.Errorf("Read(FIFO, writer stays open) = %q, want %q", v, canary)
	}
	if d := time.Since(t0); d >= 3*time.Second {
		t.Errorf("Read(FIFO, writer stays open) took %v, want less than 3s", d)
	}
}

// The descriptor is closed when Read gives up, so a run does not keep
// the FIFO open.
func TestFIFOClosedAfterTimeout(t *testing.T) {
	p := mkfifo(t)
	// One read first: the runtime opens its poller's descriptors on the
	// first file it polls, once for the process.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	_, _ = Read(ctx, File(Token, p))
	cancel()
	before := openFDs(t)
	for range 5 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		_, err := Read(ctx, File(Token, p))
		cancel()
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("Read(FIFO, 30ms) error = %v, want ErrTimeout", err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if got, limit := openFDs(t), before+1; got > limit {
		t.Errorf("%d open descriptors after 5 timed-out reads, want at most %d", got, limit)
	}
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
