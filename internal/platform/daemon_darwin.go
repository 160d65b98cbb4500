package platform

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/Control-D-Inc/ctrld-install/internal/parse"
)

// launchctlWait bounds asking launchd for the daemon's PID.
const launchctlWait = 5 * time.Second

// servicePIDs asks launchd for the PID of its job ctrld: `launchctl print
// system/ctrld` names it on a line "pid = N".
func servicePIDs(ctx context.Context) []int {
	ctx, cancel := context.WithTimeout(ctx, launchctlWait)
	defer cancel()
	out, err := exec.CommandContext(ctx, "/bin/launchctl", "print", "system/ctrld").Output()
	if err != nil {
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if ok && strings.TrimSpace(k) == "pid" {
			if pid, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && pid > 1 {
				return []int{pid}
			}
		}
	}
	return nil
}

// processRuns compares when process pid started with when the file at
// path was made or its content last written: a package that replaced the
// binary made a new file (its birth time is the install's) after the
// daemon started, and a copy over it wrote it. The change time is not
// used: chmod, chown and xattr (a quarantine flag removed by a script)
// move it without touching the binary, and each would cost a restart.
// macOS shows no executable inode for another process.
func processRuns(pid int, path string) parse.Same {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || int(kp.Proc.P_pid) != pid {
		return parse.SameUnknown
	}
	started := time.Unix(kp.Proc.P_starttime.Sec, int64(kp.Proc.P_starttime.Usec)*1000)
	fi, err := os.Stat(path)
	if err != nil {
		return parse.SameNo
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return parse.SameUnknown
	}
	born := time.Unix(st.Birthtimespec.Sec, st.Birthtimespec.Nsec)
	written := time.Unix(st.Mtimespec.Sec, st.Mtimespec.Nsec)
	if born.After(started) || written.After(started) {
		return parse.SameNo
	}
	return parse.SameYes
}

// processExecutable: macOS shows no file of a running process's image.
func processExecutable(int) string { return "" }
