//go:build unix

package support

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openRegular opens a file met during a walk. It refuses a symbolic link and
// does not block on a FIFO swapped in after the directory was read, then
// checks that what it opened is a regular file.
func openRegular(path string) (*os.File, error) {
	return open(path, unix.O_NOFOLLOW)
}

// openNamed opens a file named on the command line: a link is followed,
// but the open does not block on a FIFO (or a device that waits for a
// carrier), and only a regular file is kept.
func openNamed(path string) (*os.File, error) { return open(path, 0) }

func open(path string, flags int) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY|flags, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.EINVAL}
	}
	return f, nil
}
