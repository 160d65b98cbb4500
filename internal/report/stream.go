package report

import (
	"bytes"
	"io"
	"os"
	"reflect"
	"sync"
	"time"
)

// maxQueued bounds what a stream holds for a consumer that does not read:
// a run prints a few dozen lines, a progress line every 30 s.
const maxQueued = 1024

// Stream hands what a device command writes on stdout or stderr to a
// goroutine of its own, so that the run never waits on a consumer that does
// not read (a full pipe, a terminal paused with Ctrl-S, an RMM agent that
// reads only after the script exits): the lock, the journal, ctrld's time
// limit and the signals keep working while a line waits. Lines are written
// in the order they were given; what cannot be queued or written by the
// time Close gives up is dropped from that stream alone. The --log file and
// the outcome record are written directly and get everything.
type Stream struct {
	mu     sync.Mutex
	queue  chan []byte
	closed bool
	done   chan struct{} // closed when the goroutine has written or dropped everything
}

// Detach returns writers for stdout and stderr that never block. When
// both name the same destination (2>&1, one terminal) they share one
// queue, so that their lines keep the order they were printed in.
func Detach(stdout, stderr io.Writer) (out, errw *Stream) {
	out = newStream(stdout)
	if sameDestination(stdout, stderr) {
		return out, out
	}
	return out, newStream(stderr)
}

func newStream(w io.Writer) *Stream {
	s := &Stream{queue: make(chan []byte, maxQueued), done: make(chan struct{})}
	// Ends once Close has been called and the queue is written out. A
	// write the consumer never takes keeps it in that write: main exits
	// after Close gives up, and the process's end ends it.
	go func() {
		defer close(s.done)
		failed := false
		for b := range s.queue {
			if failed {
				continue
			}
			// A closed pipe fails every later write too; the rest is
			// dropped without asking the kernel again.
			if _, err := w.Write(b); err != nil {
				failed = true
			}
		}
	}()
	return s
}

// Write queues a copy of p. It never blocks and never fails: a line that
// finds the queue full is dropped, as a consumer that reads nothing would
// never have seen it.
func (s *Stream) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		select {
		case s.queue <- bytes.Clone(p):
		default:
		}
	}
	return len(p), nil
}

// Close takes no more lines and waits until the queued ones are written,
// at most until deadline. It reports whether everything queued was
// written. Closing twice waits again with the new deadline.
func (s *Stream) Close(deadline time.Time) bool {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.queue)
	}
	s.mu.Unlock()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-s.done:
		return true
	case <-t.C:
		return false
	}
}

// sameDestination reports whether a and b write to the same place: the
// same writer, or files that are one open pipe, terminal or file.
func sameDestination(a, b io.Writer) bool {
	// Comparing interfaces of a type that is not comparable panics.
	if ta, tb := reflect.TypeOf(a), reflect.TypeOf(b); ta == tb && ta != nil && ta.Comparable() && a == b {
		return true
	}
	fa, okA := a.(*os.File)
	fb, okB := b.(*os.File)
	if !okA || !okB {
		return false
	}
	sa, errA := fa.Stat()
	sb, errB := fb.Stat()
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
