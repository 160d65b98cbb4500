package platform

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"

	"github.com/Control-D-Inc/ctrld-install/internal/parse"
)

// procRoot is where the kernel shows processes.
const procRoot = "/proc"

// servicePIDs are the processes in the systemd unit's control group (cgroup
// v2, then v1): the daemon systemd started.
func servicePIDs(context.Context) []int {
	for _, p := range Current.ServicePIDFiles {
		if pids := readPIDs(p); len(pids) > 0 {
			return pids
		}
	}
	return nil
}

// processRuns compares the executable of process pid with the file at
// path: the kernel keeps the inode a process was started from, even after
// a package replaced or deleted the file. Only a ctrld daemon counts (its
// first argument is "run"): a recycled PID is some other program.
func processRuns(pid int, path string) parse.Same {
	dir := filepath.Join(procRoot, strconv.Itoa(pid))
	if !isDaemon(dir) {
		return parse.SameUnknown
	}
	running, err := os.Stat(filepath.Join(dir, "exe"))
	if err != nil {
		return parse.SameUnknown
	}
	onDisk, err := os.Stat(path)
	if err != nil {
		return parse.SameNo // the daemon runs a binary that is no longer there
	}
	return statSame(running, onDisk)
}

func isDaemon(dir string) bool {
	cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil {
		return false
	}
	args := bytes.Split(cmdline, []byte{0})
	return len(args) >= 2 && string(args[1]) == "run"
}

// processExecutable is the kernel's view of the file ctrld's daemon pid
// was started from: readable even after a package replaced it.
func processExecutable(pid int) string {
	dir := filepath.Join(procRoot, strconv.Itoa(pid))
	if !isDaemon(dir) {
		return ""
	}
	return filepath.Join(dir, "exe")
}

func statSame(a, b os.FileInfo) parse.Same {
	if os.SameFile(a, b) {
		return parse.SameYes
	}
	return parse.SameNo
}
