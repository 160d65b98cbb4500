//go:build windows

package resultfile

import (
	"io/fs"
	"os"
)

// On Windows the file is rejected above unless it is a regular file;
// reparse points (symlinks, junctions) are not regular for Lstat.
func openNoFollow(path string) (*os.File, error) { return os.Open(path) }

// ctrld's home on Windows is C:\ControlD, writable only by administrators
// under the installer's ACL; ownership by the current SID is not checked.
func ownedBySelf(fs.FileInfo) bool { return true }

func isNotDir(error) bool { return false }
