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
// path last changed: a package that replaced the binary wrote a new file
// (its change time is the install's) after the daemon started. macOS shows
// no executable inode for another process.
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
	changed := time.Unix(st.Ctimespec.Sec, st.Ctimespec.Nsec)
	if changed.After(started) {
		return parse.SameNo
	}
	return parse.SameYes
}
