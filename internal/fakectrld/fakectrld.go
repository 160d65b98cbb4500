// Package fakectrld is a stand-in ctrld for tests. A test package's TestMain
// calls Main when the test binary runs under the name "ctrld"; Install
// copies the test binary into a directory under that name and writes the
// sidecar script that tells the copy how to behave. The name survives any
// environment scrubbing ctrld-install does, and the sidecar lets one test
// give the fake a different script per scenario.
package fakectrld

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Name is the executable name the fake answers to.
const Name = "ctrld"

// Script says what the fake does for each ctrld command it is run as.
type Script struct {
	Version string `json:"version"` // printed as "ctrld version <Version>"; "" prints garbage and exits 1
	Start   Action `json:"start"`
	// Starts, when set, replaces Start: the nth run of start uses the nth
	// action, the last one repeating.
	Starts    []Action `json:"starts,omitempty"`
	Status    Action   `json:"status"`
	Restart   Action   `json:"restart"`   // ctrld restart
	Uninstall Action   `json:"uninstall"` // ctrld uninstall [--pin N] [--cleanup]
}

// Action is one command's behaviour, applied in field order.
type Action struct {
	Record      string            `json:"record,omitempty"`        // append argv, cwd and NO_COLOR as JSON lines to this file
	RequireFile string            `json:"require_file,omitempty"`  // when this file is missing, exit 1 now (a status with no service)
	WriteFiles  map[string]string `json:"write_files,omitempty"`   // path -> content, written 0600
	RemoveFiles []string          `json:"remove_files,omitempty"`  // then removed
	Stdout      []string          `json:"stdout,omitempty"`        // lines printed on stdout
	Stderr      []string          `json:"stderr,omitempty"`        // lines printed on stderr
	RawStdout   []byte            `json:"raw_stdout,omitempty"`    // printed as is, no newline added
	FloodBytes  int64             `json:"flood_bytes,omitempty"`   // then print this many bytes of log lines
	LongLine    int64             `json:"long_line,omitempty"`     // then print one line of this many bytes
	Grandchild  bool              `json:"grandchild,omitempty"`    // leave a process holding stdout and stderr for an hour
	SleepMS     int               `json:"sleep_ms,omitempty"`      // then sleep this long and record an "end" event
	Hang        bool              `json:"hang,omitempty"`          // then sleep for an hour
	IgnoreTerm  bool              `json:"ignore_term,omitempty"`   // ignore SIGTERM (with Hang)
	SelfKill    string            `json:"self_kill,omitempty"`     // send this signal ("TERM", "INT") to the process named in the file SelfKillPID
	SelfKillPID string            `json:"self_kill_pid,omitempty"` // file holding a PID
	Exit        int               `json:"exit"`
}

// Record is one line of an Action.Record file.
type Record struct {
	Argv    []string `json:"argv"`
	Dir     string   `json:"dir"`
	NoColor string   `json:"no_color"`
	Pgid    int      `json:"pgid"`
	Event   string   `json:"event"` // "start", or "end" after SleepMS
	UnixNS  int64    `json:"unix_ns"`
	Pid     int      `json:"pid"`
	// Env holds the child's environment variables whose names start with
	// CTRLD, so tests can check that no token travels there.
	Env []string `json:"env"`
}

// IsFake reports whether this process was started as the fake.
func IsFake() bool {
	base := filepath.Base(os.Args[0])
	return strings.TrimSuffix(base, ".exe") == Name
}

// Install copies the running test binary to dir/ctrld with script beside it
// and returns the copy's path. Copying rather than linking keeps argv[0]
// dispatch working across file systems.
func Install(dir string, script Script) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	dst := filepath.Join(dir, Name)
	if runtime.GOOS == "windows" {
		dst += ".exe"
	}
	if err := copyFile(self, dst); err != nil {
		return "", err
	}
	return dst, SetScript(dst, script)
}

// SetScript replaces the script of an installed fake.
func SetScript(fake string, script Script) error {
	b, err := json.Marshal(script)
	if err != nil {
		return err
	}
	return os.WriteFile(scriptPath(fake), b, 0o644)
}

func scriptPath(exe string) string { return strings.TrimSuffix(exe, ".exe") + ".script.json" }

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Main runs the fake and returns its exit status.
func Main() int {
	if len(os.Args) > 1 && os.Args[1] == "__hold" {
		// The grandchild: keep the inherited stdout and stderr open.
		time.Sleep(time.Hour)
		return 0
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake ctrld:", err)
		return 99
	}
	b, err := os.ReadFile(scriptPath(exe))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake ctrld: no script:", err)
		return 99
	}
	var s Script
	if err := json.Unmarshal(b, &s); err != nil {
		fmt.Fprintln(os.Stderr, "fake ctrld: bad script:", err)
		return 99
	}
	args := os.Args[1:]
	switch {
	case len(args) == 1 && args[0] == "--version":
		if s.Version == "" {
			fmt.Println("something else")
			return 1
		}
		fmt.Printf("ctrld version %s\n", s.Version)
		return 0
	case len(args) >= 1 && args[0] == "start":
		if len(s.Starts) > 0 {
			n := nextRun(exe)
			if n >= len(s.Starts) {
				n = len(s.Starts) - 1
			}
			return s.Starts[n].run(exe)
		}
		return s.Start.run(exe)
	case len(args) >= 1 && args[0] == "status":
		return s.Status.run(exe)
	case len(args) >= 1 && args[0] == "restart":
		return s.Restart.run(exe)
	case len(args) >= 1 && args[0] == "uninstall":
		return s.Uninstall.run(exe)
	}
	fmt.Fprintln(os.Stderr, "Error: unknown command for fake ctrld")
	return 1
}

// nextRun counts runs of start in a file beside the fake and returns how
// many came before this one.
func nextRun(exe string) int {
	p := strings.TrimSuffix(exe, ".exe") + ".runs"
	b, _ := os.ReadFile(p)
	n := len(b)
	_ = os.WriteFile(p, append(b, '.'), 0o644)
	return n
}

func (a Action) run(exe string) int {
	if a.IgnoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	if a.Record != "" {
		appendRecord(a.Record, "start")
	}
	if a.RequireFile != "" {
		if _, err := os.Stat(a.RequireFile); err != nil {
			return 1
		}
	}
	for p, content := range a.WriteFiles {
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(content), 0o600)
	}
	for _, p := range a.RemoveFiles {
		_ = os.Remove(p)
	}
	for _, l := range a.Stdout {
		fmt.Fprintln(os.Stdout, l)
	}
	for _, l := range a.Stderr {
		fmt.Fprintln(os.Stderr, l)
	}
	if len(a.RawStdout) > 0 {
		os.Stdout.Write(a.RawStdout)
	}
	if a.FloodBytes > 0 {
		flood(a.FloodBytes)
	}
	if a.LongLine > 0 {
		longLine(a.LongLine)
	}
	if a.Grandchild {
		c := exec.Command(exe, "__hold")
		c.Stdout, c.Stderr = os.Stdout, os.Stderr
		_ = c.Start()
	}
	if a.SelfKill != "" {
		signalPIDFile(a.SelfKillPID, a.SelfKill)
	}
	if a.SleepMS > 0 {
		time.Sleep(time.Duration(a.SleepMS) * time.Millisecond)
		if a.Record != "" {
			appendRecord(a.Record, "end")
		}
	}
	if a.Hang {
		time.Sleep(time.Hour)
	}
	return a.Exit
}

func appendRecord(path, event string) {
	wd, _ := os.Getwd()
	rec := Record{Argv: os.Args, Dir: wd, NoColor: os.Getenv("NO_COLOR"), Pid: os.Getpid(), Pgid: pgid(),
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
