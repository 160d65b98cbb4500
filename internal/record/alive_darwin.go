package record

import (
	"bytes"

	"golang.org/x/sys/unix"
)

func processIsInstaller(pid int) bool {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) {
		return false
	}
	comm := kp.Proc.P_comm[:]
	if i := bytes.IndexByte(comm, 0); i >= 0 {
		comm = comm[:i]
	}
	return bytes.HasPrefix(comm, []byte(installerName))
}
