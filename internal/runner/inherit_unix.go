//go:build unix

package runner

import (
	"os"
	"strconv"
	"syscall"
)

// closeInherited marks every descriptor from 3 up close-on-exec. Go opens
// its own that way, but the caller may have left some open (an MDM
// agent's pipe, a shell's redirection), and os/exec passes on whatever is
// not close-on-exec: ctrld, and the daemon an init script starts from it,
// would hold the agent's pipe open for as long as they run.
func closeInherited() {
	if closeRangeOnExec() {
		return
	}
	if entries, err := os.ReadDir("/dev/fd"); err == nil {
		for _, e := range entries {
			if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
				syscall.CloseOnExec(fd)
			}
		}
		return
	}
	for fd := 3; fd < 1024; fd++ {
		syscall.CloseOnExec(fd)
	}
}
