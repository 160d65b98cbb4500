package resultfile

import (
	"io/fs"
	"syscall"
)

// changeTime is the inode change time. Unlike the modification time, no
// user can set it: it moves on every write, whatever the clock did.
func changeTime(fi fs.FileInfo) [2]int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return [2]int64{st.Ctimespec.Sec, st.Ctimespec.Nsec}
	}
	return [2]int64{}
}
