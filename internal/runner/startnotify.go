package runner

import (
	"io"
	"sync"
)

// startNotifier wraps a writer that os/exec copies the child's output to and
// calls started once, before the first byte is copied.
//
// For a writer that is not an *os.File, exec.Cmd.Start creates a pipe and
// launches a goroutine running io.Copy into the writer, after it has set
// cmd.Process; io.Copy calls ReadFrom at once, before any output exists. So
// started runs right after the child is created, even if it never prints,
// and may read cmd.Process without a race. Windows uses it to put ctrld in a
// job object without a hook in Start. Should a future os/exec stop calling
// ReadFrom, the first Write still calls started, only later.
type startNotifier struct {
	w       io.Writer
	once    sync.Once
	started func()
}

func (n *startNotifier) Write(p []byte) (int, error) {
	n.once.Do(n.started)
	return n.w.Write(p)
}

func (n *startNotifier) ReadFrom(r io.Reader) (int64, error) {
	n.once.Do(n.started)
	// writerOnly hides any ReadFrom of the wrapped writer, and this one, from
	// io.Copy.
	return io.Copy(writerOnly{n.w}, r)
}

type writerOnly struct{ io.Writer }
