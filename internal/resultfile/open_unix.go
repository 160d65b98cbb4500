//go:build unix

package resultfile

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

func openNoFollow(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

func ownedBySelf(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

// pinIdentity is for Windows, where a FileInfo from Lstat reads the file's
// identity lazily; on Unix it is in the stat already.
func pinIdentity(fs.FileInfo) {}
