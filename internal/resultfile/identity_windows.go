//go:build windows

package resultfile

import (
	"io/fs"
	"os"
)

func isNotDir(error) bool { return false }

// pinIdentity makes fi read the file's identity now. A FileInfo from Lstat
// reads it by path at its first comparison, which after ctrld replaced the
// file would be the new file's, and a replaced file would look unchanged.
func pinIdentity(fi fs.FileInfo) { os.SameFile(fi, fi) }

// Windows keeps no change time Lstat reports; the identity, size and
// modification time remain.
func changeTime(fs.FileInfo) [2]int64 { return [2]int64{} }
