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
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
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
