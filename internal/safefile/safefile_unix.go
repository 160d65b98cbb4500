//go:build unix

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openFile opens without following a link (O_NOFOLLOW), without waiting
// for a FIFO's writer (O_NONBLOCK) and without making a terminal the
// controlling one (O_NOCTTY). A non-blocking descriptor goes to the
// runtime's poller where it can (a FIFO), so a read waiting there ends when
// the file is closed; a regular file is read as any other.
func openFile(path string, flag int, perm fs.FileMode, follow, _ bool) (*os.File, error) {
	flags := flag | unix.O_NONBLOCK | unix.O_CLOEXEC | unix.O_NOCTTY
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Open(path, flags, uint32(perm.Perm()))
	if err != nil {
		// A link is ELOOP on Linux and macOS and EMLINK on FreeBSD;
		// a socket is ENXIO; a directory opened for writing EISDIR.
		switch {
		case !follow && (errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK)):
			err = ErrLink
		case errors.Is(err, unix.ENXIO) || errors.Is(err, unix.EISDIR):
			err = ErrNotRegular
		case errors.Is(err, unix.ENOTDIR):
			err = fs.ErrNotExist // a parent that is a file holds nothing
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// OpenDir opens a directory without following a link, for fchmod and
// fsync on the directory itself.
func OpenDir(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		// O_DIRECTORY meets a link first on Linux: ENOTDIR.
		if fi, lerr := os.Lstat(path); errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) ||
			(lerr == nil && fi.Mode()&fs.ModeSymlink != 0) {
			err = ErrLink
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// ownedBy trusts root's files and uid's.
func ownedBy(fi fs.FileInfo, uid int) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && (st.Uid == 0 || int(st.Uid) == uid)
}

func writableByOthers(fi fs.FileInfo) bool { return fi.Mode().Perm()&0o022 != 0 }

func links(_ *os.File, fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// ID is a file's identity: the same ID is the same file, whatever its name.
type ID struct{ dev, ino uint64 }

// IDOf is fi's identity.
func IDOf(fi fs.FileInfo) ID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return ID{dev: uint64(st.Dev), ino: uint64(st.Ino)}
	}
	return ID{}
}

// SyncDir makes a rename in dir durable. Errors are ignored: the renamed
// file is in place already, and some file systems refuse to sync a
// directory at all.
func SyncDir(dir string) {
	d, err := OpenDir(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	d.Close()
}
