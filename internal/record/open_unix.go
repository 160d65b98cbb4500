//go:build unix

package record

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func openRecord(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// ownedBy trusts root's files and the reader's own: status run by a user
// reads root's record, and a --simulate home is the user's.
func ownedBy(fi fs.FileInfo, uid int) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && (st.Uid == 0 || int(st.Uid) == uid)
}

// syncDirectory makes a rename in dir durable. Errors are ignored: the
// record is already in place, and some file systems refuse to sync a
// directory at all.
func syncDirectory(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}
