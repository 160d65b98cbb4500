//go:build unix

package install

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

type fileID struct{ dev, ino uint64 }

func identity(fi os.FileInfo) fileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
	}
	return fileID{}
}

var errNotRegular = errors.New("not a regular file")

// openLog opens a daemon log without following a link and without
// blocking on a FIFO, and checks what was opened.
func openLog(path string) (*os.File, os.FileInfo, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil, nil, os.ErrNotExist
		}
		return nil, nil, err
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, errNotRegular
	}
	return f, fi, nil
}
