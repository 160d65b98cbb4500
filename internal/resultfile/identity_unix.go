//go:build unix

package resultfile

import (
	"errors"
	"io/fs"
	"syscall"
)

func isNotDir(err error) bool { return errors.Is(err, syscall.ENOTDIR) }

// pinIdentity is for Windows, where a FileInfo from Lstat reads the file's
// identity lazily; on Unix it is in the stat already.
func pinIdentity(fs.FileInfo) {}
