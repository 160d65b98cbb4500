package extra

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// startDaemon stops the daemon named in pidFile and starts another, as the
// SysV init script's restart (stop, then start) and ctrld start (which
// uninstalls the running service first) do.
func startDaemon(exe, pidFile string) {
	if old := readPID(pidFile); alive(old) {
		if p, err := os.FindProcess(old); err == nil {
			_ = p.Kill()
		}
		for i := 0; i < 100 && alive(old); i++ {
			time.Sleep(10 * time.Millisecond)
		}
	}
	log, err := os.OpenFile(pidFile+".log", os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer log.Close()
	c := exec.Command(exe, "__daemon")
	c.Stdout, c.Stderr = log, log
	if c.Start() != nil {
		return
	}
	_ = os.WriteFile(pidFile+".tmp", strconv.AppendInt(nil, int64(c.Process.Pid), 10), 0o644)
	_ = os.Rename(pidFile+".tmp", pidFile)
	_ = c.Process.Release()
}

// readPID returns the PID in a PID file, 0 when there is none.
func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid < 1 {
		return 0
	}
	return pid
}

// alive reports whether pid names a process that has not ended. A zombie
// has ended: a daemon that was killed may wait long to be reaped by its new
// parent (init in a container may never reap it).
func alive(pid int) bool {
	if pid < 1 {
		return false
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		i := bytes.LastIndexByte(b, ')')
		return i >= 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
	}
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}

// Alive reports whether the process named in the PID file that a Daemon
// action wrote runs, and its PID.
func Alive(pidFile string) (int, bool) {
	pid := readPID(pidFile)
	return pid, alive(pid)
}

func appendRecord(path, event string) {
	wd, _ := os.Getwd()
	rec := standin.Record{Argv: os.Args, Dir: wd, NoColor: os.Getenv("NO_COLOR"), Pid: os.Getpid(), Pgid: pgid(),
		Event: event, UnixNS: time.Now().UnixNano()}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "CTRLD") {
			rec.Env = append(rec.Env, kv)
		}
	}
	b, _ := json.Marshal(rec)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err == nil {
		fmt.Fprintf(f, "%s\n", b)
		f.Close()
	}
}

// flood prints n bytes of realistic, coloured log lines.
func flood(n int64) {
	line := []byte("\x1b[90mNov 29 12:25:02.640\x1b[0m \x1b[33mNTC\x1b[0m noise line from a very chatty ctrld daemon, nothing to see here\n")
	writeRepeated(bytes.Repeat(line, (64<<10)/len(line)), n)
}

// longLine prints one line of n bytes.
func longLine(n int64) {
	writeRepeated(bytes.Repeat([]byte{'x'}, 64<<10), n)
	os.Stdout.Write([]byte("\n"))
}

// writeRepeated writes n bytes to stdout, repeating pattern.
func writeRepeated(pattern []byte, n int64) {
	for n > 0 {
		chunk := pattern
		if int64(len(chunk)) > n {
			chunk = chunk[:n]
		}
		if _, err := os.Stdout.Write(chunk); err != nil {
			return
		}
		n -= int64(len(chunk))
	}
}
