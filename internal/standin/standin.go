// Package standin is the one stand-in for ctrld: the tests, --simulate
// and the benchmarks all run it. It does what a Script says for each ctrld
// command and nothing else.
//
// It is an executable started under the name "ctrld": a test binary copied
// into a temporary directory (its script in a sidecar file beside it), the
// bench's own small binary, or ctrld-install's own executable for
// --simulate (its script named by an environment variable). For the
// production binary both the name and the variable are required, so neither
// a binary renamed to ctrld nor a stray variable turns a real run into a
// simulation.
package standin

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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Name is the executable name the stand-in answers to.
const Name = "ctrld"

// EnvScript names the script file of a stand-in that is not a test binary
// with a sidecar (ctrld-install's own executable under --simulate).
const EnvScript = "CTRLD_INSTALL_STANDIN_SCRIPT"

// Script says what the stand-in does for each ctrld command it is run as.
type Script struct {
	Version string `json:"version"` // printed as "ctrld version <Version>"; "" prints garbage and exits 1
	// VersionRun, when set, is what --version does after printing the
	// version (a --version that hangs, for instance).
	VersionRun *Action `json:"version_run,omitempty"`
	Start      Action  `json:"start"`
	// Starts, when set, replaces Start: the nth run of start uses the nth
	// action, the last one repeating.
	Starts    []Action `json:"starts,omitempty"`
	Status    Action   `json:"status"`
	Restart   Action   `json:"restart"`
	Uninstall Action   `json:"uninstall"`
	// Device, when set, makes start, status, restart and uninstall drive
	// a modelled service manager (see Device) before their Action runs; an
	// Action's non-zero Exit then replaces the device's status.
	Device *Device `json:"device,omitempty"`
}

// Action is one command's behaviour, applied in field order.
type Action struct {
	Record      string            `json:"record,omitempty"`       // append argv, cwd and NO_COLOR as JSON lines to this file
	NeedFile    string            `json:"need_file,omitempty"`    // exit 1 at once unless this file exists, as ctrld status does
	NeedAlive   string            `json:"need_alive,omitempty"`   // exit 1 at once unless the process named in this PID file runs, as a SysV script's status does
	RequirePIN  string            `json:"require_pin,omitempty"`  // exit 126 at once unless argv has --pin with this value
	Service     string            `json:"service,omitempty"`      // Windows: "install", "running" or "remove" the service ctrld, as ctrld does (exit 1 on failure)
	WriteFiles  map[string]string `json:"write_files,omitempty"`  // path -> content, written 0600
	AppendFiles map[string]string `json:"append_files,omitempty"` // path -> content appended, as a daemon writes its log
	RemoveFiles []string          `json:"remove_files,omitempty"`
	MoveFiles   map[string]string `json:"move_files,omitempty"` // from -> to, renamed into place as ctrld writes its result file
	Result      *ResultFile       `json:"result,omitempty"`     // write a contract result file
	Stdout      []string          `json:"stdout,omitempty"`     // lines printed on stdout
	Stderr      []string          `json:"stderr,omitempty"`     // lines printed on stderr
	RawStdout   []byte            `json:"raw_stdout,omitempty"` // printed as is, no newline added
	CatFile     string            `json:"cat_file,omitempty"`   // copy this file to stdout
	FloodBytes  int64             `json:"flood_bytes,omitempty"`
	LongLine    int64             `json:"long_line,omitempty"`     // then print one line of this many bytes
	Grandchild  bool              `json:"grandchild,omitempty"`    // leave a process holding stdout and stderr for an hour
	Daemon      string            `json:"daemon,omitempty"`        // as ctrld's SysV init script: stop the daemon in this PID file, start one in this group (no setsid), output to <file>.log
	SignalPPID  string            `json:"signal_ppid,omitempty"`   // send this signal ("TERM", "INT") to the parent, as an MDM agent's time limit would
	SelfKill    string            `json:"self_kill,omitempty"`     // send this signal ("TERM", "INT") to the process named in the file SelfKillPID
	SelfKillPID string            `json:"self_kill_pid,omitempty"` // file holding a PID
	SleepMS     int               `json:"sleep_ms,omitempty"`      // then sleep this long and record an "end" event
	Hang        bool              `json:"hang,omitempty"`          // then sleep for an hour
	IgnoreTerm  bool              `json:"ignore_term,omitempty"`   // ignore SIGTERM (with Hang)
	StampFile   string            `json:"stamp_file,omitempty"`    // write the wall clock in Unix nanoseconds here, last thing before exiting
	Exit        int               `json:"exit"`
}

// ResultFile is a result file as ctrld with the failure contract writes it.
type ResultFile struct {
	Path    string `json:"path"`
	Stage   string `json:"stage"`
	Code    string `json:"code"`
	Exit    int    `json:"exit_code"`
	Message string `json:"message"`
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

// IsFake reports whether this test binary was started as the stand-in.
func IsFake() bool { return isName(os.Args[0]) }

// IsStandIn reports whether ctrld-install's own executable was started as
// the stand-in of a simulation: both the name and the script are needed.
func IsStandIn(argv0 string, getenv func(string) string) bool {
	return isName(argv0) && getenv(EnvScript) != ""
}

func isName(argv0 string) bool {
	return strings.TrimSuffix(filepath.Base(argv0), ".exe") == Name
}

// Install copies the running test binary to dir/ctrld with script beside it
// and returns the copy's path. Copying rather than linking keeps argv[0]
// dispatch working across file systems.
//
// Copy only before tests run in parallel: while the copy is open for
// writing, a process forked by another test inherits it until that process
// execs, and running the copy then fails with ETXTBSY ("text file busy",
// golang/go#22315). Parallel tests Link a copy made in TestMain instead.
func Install(dir string, script Script) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	dst := exePath(dir)
	if err := copyFile(self, dst); err != nil {
		return "", err
	}
	return dst, SetScript(dst, script)
}

// Link hard-links src, a stand-in that Install made before the tests
// started, to dir/ctrld with script beside it, and returns the link's path.
// A link opens nothing for writing, so it is safe while other tests fork.
// Across file systems, where a hard link cannot be made, it copies. The
// link is the same file as src: change its mode or its content and every
// stand-in linked from src changes too; replace the link instead.
func Link(dir, src string, script Script) (string, error) {
	dst := exePath(dir)
	if err := os.Link(src, dst); err != nil {
		if err := copyFile(src, dst); err != nil {
			return "", err
		}
	}
	return dst, SetScript(dst, script)
}

func exePath(dir string) string {
	if runtime.GOOS == "windows" {
		return filepath.Join(dir, Name+".exe")
	}
	return filepath.Join(dir, Name)
}

// SetScript replaces the script of an installed stand-in.
func SetScript(fake string, script Script) error { return WriteScript(SidecarPath(fake), script) }

// WriteScript writes a script file.
func WriteScript(path string, script Script) error {
	b, err := json.Marshal(script)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// SidecarPath is where the stand-in at exe finds its script.
func SidecarPath(exe string) string { return strings.TrimSuffix(exe, ".exe") + ".script.json" }

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

// Main runs the stand-in and returns its exit status.
func Main() int {
	if len(os.Args) > 1 && (os.Args[1] == "__hold" || os.Args[1] == "__daemon") {
		// The grandchild keeps the inherited stdout and stderr open; the
		// daemon has them on its log and serves.
		time.Sleep(time.Hour)
		return 0
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stand-in ctrld:", err)
		return 99
	}
	path := os.Getenv(EnvScript)
	if path == "" {
		path = SidecarPath(exe)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stand-in ctrld: no script")
		return 99
	}
	var s Script
	if err := json.Unmarshal(b, &s); err != nil {
		fmt.Fprintln(os.Stderr, "stand-in ctrld: bad script")
		return 99
	}
	args := os.Args[1:]
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	if cmd == "run" {
		return daemon() // started by the service manager
	}
	if s.Device != nil && cmd != "--version" {
		return s.device(exe, path, args)
	}
	switch {
	case len(args) == 1 && cmd == "--version":
		if s.Version == "" {
			fmt.Println("something else")
			return 1
		}
		fmt.Printf("ctrld version %s\n", s.Version)
		if s.VersionRun != nil {
			return s.VersionRun.run(exe)
		}
		return 0
	case cmd == "start":
		if len(s.Starts) > 0 {
			n := nextRun(path)
			if n >= len(s.Starts) {
				n = len(s.Starts) - 1
			}
			return s.Starts[n].run(exe)
		}
		return s.Start.run(exe)
	case cmd == "status":
		return s.Status.run(exe)
	case cmd == "restart":
		return s.Restart.run(exe)
	case cmd == "uninstall":
		return s.Uninstall.run(exe)
	}
	fmt.Fprintln(os.Stderr, "Error: unknown command for stand-in ctrld")
	return 1
}

// device runs a command against the modelled service manager, then the
// command's Action.
func (s Script) device(exe, script string, args []string) int {
	d := s.Device
	name, rest, under := args[0], args[1:], false
	if name == "service" && len(rest) > 0 {
		name, rest, under = rest[0], rest[1:], true
	}
	if d.Form == FormLegacy && !under && name != "start" {
		// ctrld 1.2's cobra: status, restart and uninstall are not
		// top-level commands.
		fmt.Fprintf(os.Stderr, "Error: unknown command %q for \"ctrld\"\nRun 'ctrld --help' for usage.\n", name)
		return 1
	}
	var code int
	var act Action
	switch name {
	case "start":
		code, act = d.start(exe, rest), s.Start
		if len(s.Starts) > 0 {
			act = s.Starts[min(nextRun(script), len(s.Starts)-1)]
		}
	case "status":
		code, act = d.status(), s.Status
	case "restart":
		code, act = d.restart(), s.Restart
	case "uninstall":
		code, act = d.uninstall(), s.Uninstall
	default:
		fmt.Fprintln(os.Stderr, "Error: unknown command for stand-in ctrld")
		return 1
	}
	if ec := act.run(exe); act.Exit != 0 {
		code = ec
	}
	return code
}

// nextRun counts runs of start in a file beside the fake and returns how
// many came before this one.
func nextRun(script string) int {
	p := script + ".runs"
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
	if a.NeedFile != "" {
		if _, err := os.Stat(a.NeedFile); err != nil {
			return 1
		}
	}
	if a.NeedAlive != "" && !alive(readPID(a.NeedAlive)) {
		return 1
	}
	if a.RequirePIN != "" {
		i := slices.Index(os.Args, "--pin")
		if i < 0 || i+1 >= len(os.Args) || os.Args[i+1] != a.RequirePIN {
			fmt.Println("deactivation pin is invalid")
			return 126
		}
	}
	if a.Service != "" {
		if err := service(exe, a.Service); err != nil {
			fmt.Fprintln(os.Stderr, "stand-in ctrld: service:", err)
			return 1
		}
	}
	for p, content := range a.WriteFiles {
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(content), 0o600)
	}
	for p, content := range a.AppendFiles {
		if f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
			_, _ = f.WriteString(content)
			f.Close()
		}
	}
	for _, p := range a.RemoveFiles {
		_ = os.Remove(p)
	}
	for from, to := range a.MoveFiles {
		_ = os.Rename(from, to)
	}
	if a.Result != nil {
		a.Result.write()
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
	if a.CatFile != "" {
		if f, err := os.Open(a.CatFile); err == nil {
			_, _ = io.Copy(os.Stdout, f)
			f.Close()
		}
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
	if a.Daemon != "" {
		startDaemon(exe, a.Daemon)
	}
	if a.SignalPPID != "" {
		signalPID(os.Getppid(), a.SignalPPID)
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
	if a.StampFile != "" {
		_ = os.WriteFile(a.StampFile, strconv.AppendInt(nil, time.Now().UnixNano(), 10), 0o644)
	}
	return a.Exit
}

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

// write stores the result file atomically, as ctrld does.
func (r *ResultFile) write() {
	b, _ := json.Marshal(map[string]any{
		"version": 1, "timestamp": time.Now().UTC().Format(time.RFC3339),
		"stage": r.Stage, "code": r.Code, "exit_code": r.Exit, "message": r.Message,
	})
	tmp := r.Path + ".tmp"
	if os.WriteFile(tmp, b, 0o600) == nil {
		_ = os.Rename(tmp, r.Path)
	}
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
