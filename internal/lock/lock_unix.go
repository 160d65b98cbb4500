//go:build unix

package lock

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// open opens a lock file without following a symlink: a link planted in
// the home directory must not make a root process create, lock or chmod a
// file elsewhere. O_NONBLOCK keeps a FIFO planted there from blocking the
// open. With create, the file is made with mode if missing and opened for
// writing (a lock needs no write access, but creating does); without it,
// it is opened read-only, which is all flock needs.
func (c Checker) open(path string, mode uint32, create bool) (*os.File, error) {
	flags := unix.O_NOFOLLOW | unix.O_CLOEXEC | unix.O_NONBLOCK | unix.O_NOCTTY
	if !create {
		return c.checked(path, flags|unix.O_RDONLY, 0, false)
	}
	flags |= unix.O_RDWR
	for range 3 {
		f, err := c.checked(path, flags|unix.O_CREAT|unix.O_EXCL, mode, true)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
		f, err = c.checked(path, flags, mode, true)
		// Removed between the two opens: try again.
		if !errors.Is(err, fs.ErrNotExist) {
			return f, err
		}
	}
	return nil, &fs.PathError{Op: "open", Path: path, Err: unix.ENOENT}
}

// checked opens path and checks the descriptor: a regular file, owned by
// root or c.UID, that group and others cannot write. With fix, a file of
// the right owner is brought to mode (the umask took bits at creation, or
// an older version made it with another).
func (c Checker) checked(path string, flags int, mode uint32, fix bool) (*os.File, error) {
	fd, err := unix.Open(path, flags, mode)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK) || errors.Is(err, unix.ENXIO) || errors.Is(err, unix.EISDIR) {
			// A symlink (ELOOP on Linux and macOS, EMLINK on FreeBSD) or
			// a socket or a directory.
			return nil, ErrUntrusted
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "fstat", Path: path, Err: err}
	}
	ok := st.Mode&unix.S_IFMT == unix.S_IFREG && (st.Uid == 0 || int(st.Uid) == c.UID)
	perm := uint32(st.Mode) & 0o777
	if ok && fix && perm != mode {
		if err := unix.Fchmod(fd, mode); err == nil {
			perm = mode
		}
	}
	if !ok || perm&0o022 != 0 {
		unix.Close(fd)
		return nil, ErrUntrusted
	}
	return os.NewFile(uintptr(fd), path), nil
}

func tryLock(f *os.File, exclusive bool) (bool, error) {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	err := unix.Flock(int(f.Fd()), how|unix.LOCK_NB)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, unix.EWOULDBLOCK) {
		return false, nil
	}
	return false, err
}

func unlock(f *os.File) { unix.Flock(int(f.Fd()), unix.LOCK_UN) }
