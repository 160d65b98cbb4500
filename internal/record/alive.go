package record

// InstallerAlive reports whether pid is a running ctrld-install process.
// A PID alone is not enough: after a crash or reboot the number may belong
// to anything, and a journal entry must not look alive forever.
func InstallerAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return processIsInstaller(pid)
}

// installerName is the process name ctrld-install runs under; the kernel
// keeps at least 15 bytes of it.
const installerName = "ctrld-install"
