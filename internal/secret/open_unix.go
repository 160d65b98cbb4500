//go:build unix

package secret

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// openNonBlocking opens path for reading without waiting for a FIFO's
// writer. O_NOCTTY: root reading a terminal device must not make it the
// controlling terminal. Symlinks are followed: the administrator named the
// path, and what is read only goes to ctrld's argv.
func openNonBlocking(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	// A non-blocking descriptor goes to the runtime's poller, so a read
	// waiting on a FIFO ends when the file is closed.
	return os.NewFile(uintptr(fd), path), nil
}
