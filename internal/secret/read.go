package secret

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
)

// maxRead bounds what is read: a valid secret is at most MaxLen ASCII
// characters, twice that in UTF-16, so more than this is never needed.
const maxRead = 4 << 10

// fifoPoll is how often a FIFO without a writer is looked at again. Read
// returns end of file while no writer has it open, and a poller does not
// wake for a writer that has not come yet.
const fifoPoll = 25 * time.Millisecond

// readFile reads the first line of the file at path. The open does not
// block on a FIFO without a writer; reading then waits for one while ctx
// allows.
func readFile(ctx context.Context, path string) ([]byte, error) {
	// Links are followed: the administrator named the path, and what is
	// read only goes to ctrld's argv. A FIFO or a terminal is read too.
	f, fi, err := safefile.Open(path, safefile.Rules{Follow: true, AnyKind: true, Owner: safefile.AnyOwner})
	if err != nil {
		if errors.Is(err, safefile.ErrNotRegular) {
			return nil, errNotAFile
		}
		return nil, err
	}
	defer f.Close()
	// Closing the file is what interrupts a read that waits in the poller.
	return readFirstLine(ctx, f, &fileReader{f: f, fifo: fi.Mode()&os.ModeNamedPipe != 0})
}

type fileReader struct {
	f    *os.File
	fifo bool
}

// readFirstLine reads r in a goroutine until a line end, maxRead bytes or
// end of input, and gives up when ctx is done. With fr set, r is fr.f: it is
// closed to wake the goroutine, and a FIFO's end of input before any byte is
// waited out.
func readFirstLine(ctx context.Context, r io.Reader, fr *fileReader) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	stop := make(chan struct{})
	// Ends at the line's end or the input's; when ctx ends first it is
	// abandoned: a file is closed under it, a FIFO's poll sees stop, and a
	// read of standard input stuck in the kernel ends with the process.
	go func() {
		b, err := readLoop(r, fr, stop)
		done <- result{b, err}
	}()
	select {
	case res := <-done:
		return res.b, res.err
	case <-ctx.Done():
		close(stop)
		if fr != nil {
			fr.f.Close()
		}
		return nil, ctx.Err()
	}
}

func readLoop(r io.Reader, fr *fileReader, stop <-chan struct{}) ([]byte, error) {
	buf := make([]byte, 0, maxRead)
	for len(buf) < maxRead && !lineEnd(buf) {
		n, err := r.Read(buf[len(buf):maxRead])
		buf = buf[:len(buf)+n]
		switch {
		case errors.Is(err, io.EOF) && fr != nil && fr.fifo && len(buf) == 0:
			select {
			case <-stop:
				return nil, context.Canceled
			case <-time.After(fifoPoll):
			}
		case errors.Is(err, io.EOF):
			return buf, nil
		case err != nil:
			return nil, err
		}
	}
	return buf, nil
}
