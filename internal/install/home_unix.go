//go:build unix

package install

import (
	"os"
	"syscall"
)

func checkHomeOwner(fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if ok && int(st.Uid) != os.Geteuid() && st.Uid != 0 {
		return &UnsafeHomeError{Check: "is not owned by root"}
	}
	return nil
}
