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

// pinIdentity makes fi read the file's identity now. A FileInfo from Lstat
// reads it by path at its first comparison, which after ctrld replaced the
// file would be the new file's, and a replaced file would look unchanged.
func pinIdentity(fi fs.FileInfo) { os.SameFile(fi, fi) }

// Windows keeps no change time Lstat reports; the identity, size and
// modification time remain.
func changeTime(fs.FileInfo) [2]int64 { return [2]int64{} }
