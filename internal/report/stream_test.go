package report

import (
	"bytes"
	"errors"
	"sync"
	"testing"
	"time"
)

// blockedWriter is a consumer that reads nothing until released.
type blockedWriter struct {
	release chan struct{}
	mu      sync.Mutex
	got     bytes.Buffer
}

func (b *blockedWriter) Write(p []byte) (int, error) {
	<-b.release
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.got.Write(p)
}

// A consumer that reads nothing never blocks a write, and Close gives up
// at its deadline; one that reads late gets every line, in order.
func TestStreamNeverBlocks(t *testing.T) {
	w := &blockedWriter{release: make(chan struct{})}
	s := newStream(w)
	for _, l := range []string{"one\n", "two\n", "three\n"} {
		s.Write([]byte(l))
	}
	if s.Close(time.Now().Add(50 * time.Millisecond)) {
		t.Fatal("Close reported everything written to a consumer that read nothing")
	}
	close(w.release)
	if !s.Close(time.Now().Add(time.Minute)) {
		t.Fatal("Close gave up although the consumer read")
	}
	if got := w.got.String(); got != "one\ntwo\nthree\n" {
		t.Errorf("written %q", got)
	}
}

type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	f.n++
	return 0, errors.New("closed pipe")
}

// After a write fails (a closed pipe), the rest is dropped without asking
// again, and a full queue drops lines rather than block.
func TestStreamDropsAfterFailureAndWhenFull(t *testing.T) {
	f := &failingWriter{}
	s := newStream(f)
	for range 3 {
		s.Write([]byte("x\n"))
	}
	if !s.Close(time.Now().Add(time.Minute)) {
		t.Fatal("Close did not finish")
	}
	if f.n != 1 {
		t.Errorf("%d writes to a failed stream, want 1", f.n)
	}

	w := &blockedWriter{release: make(chan struct{})}
	s = newStream(w)
	for range 2 * maxQueued {
		s.Write([]byte("y\n"))
	}
	close(w.release)
	s.Close(time.Now().Add(time.Minute))
	if n := bytes.Count(w.got.Bytes(), []byte("\n")); n > maxQueued+1 || n == 0 {
		t.Errorf("%d lines written of %d, want at most the queue and the one in flight", n, 2*maxQueued)
	}
}

// stdout and stderr that are one destination share one queue, so their
// lines keep the order they were printed in.
func TestDetachSharesOneDestination(t *testing.T) {
	var b bytes.Buffer
	out, errw := Detach(&b, &b)
	if out != errw {
		t.Fatal("one buffer for both streams got two queues")
	}
	out.Write([]byte("a\n"))
	errw.Write([]byte("b\n"))
	out.Write([]byte("c\n"))
	out.Close(time.Now().Add(time.Minute))
	if b.String() != "a\nb\nc\n" {
		t.Errorf("order %q", b.String())
	}
	var x, y bytes.Buffer
	if out, errw := Detach(&x, &y); out == errw {
		t.Error("two buffers share a queue")
	}
}
