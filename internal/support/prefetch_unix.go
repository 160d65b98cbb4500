//go:build unix

package support

import (
	"errors"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// fetchFile reads a small file ahead with four system calls (open, fstat,
// read, close) and no *os.File: a fleet is a hundred thousand of them, and
// an os.File's poller registration, second stat and finalizer were a
// third of the time. It opens as openRegularInfo does: no link followed,
// no block on a FIFO, and only a regular file read.
func fetchFile(path string, buffered *atomic.Int64) prefetchedFile {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return prefetchedFile{path: path, failed: true}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return prefetchedFile{path: path, failed: true}
	}
	size := st.Size
	if size > prefetchMaxFile || buffered.Add(size) > prefetchBudget {
		if size <= prefetchMaxFile {
			buffered.Add(-size)
		}
		// The counter opens it again and streams it.
		return prefetchedFile{path: path}
	}
	data := make([]byte, size)
	n := 0
	for n < len(data) {
		k, err := unix.Read(fd, data[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			buffered.Add(-size)
			return prefetchedFile{path: path, failed: true}
		}
		if k == 0 {
			break // it shrank since it was opened: read as it now is
		}
		n += k
	}
	buffered.Add(int64(n) - size)
	return prefetchedFile{path: path, data: data[:n], ahead: true}
}
