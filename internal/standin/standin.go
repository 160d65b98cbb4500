// Package standin is the one stand-in for ctrld: the tests, --simulate
// and the benchmarks all run it. It does what a Script says for each ctrld
// command and nothing else.
//
// It is an executable started under the name "ctrld": the bench's own small
// binary (bench/cmd/fakectrld, which the tests run too), a test binary
// copied into a temporary directory (its script in a sidecar file beside
// it), or ctrld-install's own executable for --simulate (its script named
// by an environment variable). For the production binary both the name and
// the variable are required, so neither a binary renamed to ctrld nor a
// stray variable turns a real run into a simulation.
//
// This package holds what --simulate needs and ships in ctrld-install: the
// version line, printed lines, written files, a result file, a signal to
// the parent, a hang. The behaviours only tests need (floods, long lines,
// grandchildren, daemons, the modelled service manager, records of argv)
// live in internal/standin/extra, which the stand-in binaries the tests
// and the bench build import, and ctrld-install does not: a script that
// asks for one of them without it fails with exit 99.
package standin

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
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
	// Builds are the builds of ctrld a test puts at the --ctrld path, by
	// label: a stand-in made by LinkBuild or ReplaceBuild carries its
	// label in a trailer of its own bytes and behaves as its Build. One
	// script serves every build, as a new build renamed over the binary
	// keeps the sidecar beside it.
	Builds map[string]Build `json:"builds,omitempty"`
}

// Build is one build of ctrld, as a test that replaces the binary needs
// it. The dying build of captures/ctrld-1.5.0-restart-dying-build.txt:
// "a new build put over the binary by rename", whose `--version` prints
// v1.6.0, whose `run` exits 2 at once, and whose every other command is
// 1.5.0's.
type Build struct {
	// Version, when set, is what --version prints ("ctrld version
	// <Version>") in place of the Script's.
	Version string `json:"version,omitempty"`
	// RunExit, when not 0, is the status the daemon (`ctrld run`) exits
	// with at once: a service manager starts it and it is gone.
	RunExit int `json:"run_exit,omitempty"`
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

// BuildTrailer starts the trailer that LinkBuild and ReplaceBuild append
// to a stand-in: "\nCTRLD-STANDIN-BUILD:<label>\n", the last bytes of the
// file. ELF, Mach-O and PE loaders map what their headers name and ignore
// bytes after it, so the copy runs as the master does while differing from
// it in bytes, as a new build of ctrld does.
const BuildTrailer = "\nCTRLD-STANDIN-BUILD:"

// maxLabel bounds a build's label, so a reader needs only the file's end.
const maxLabel = 64

// LinkBuild puts a copy of master, the stand-in made before the tests
// started, at dir/ctrld with label's trailer and script beside it, and
// returns its path. It must be a copy, not a hard link: a link shares the
// master's bytes, and a build is told apart by its own. The copy is
// written by another process (cp), so no test's fork can hold it open for
// writing when it runs (ETXTBSY).
func LinkBuild(dir, master string, script Script, label string) (string, error) {
	dst := exePath(dir)
	if err := copyBuild(master, dst, label); err != nil {
		return "", err
	}
	return dst, SetScript(dst, script)
}

// ReplaceBuild puts the build label of master at path as a new build of
// ctrld is installed: written beside it under another name, then renamed
// over it. A daemon already running from the old file keeps its bytes; the
// next run of path is the new build, and it finds the same script, since
// the sidecar is named after the path.
func ReplaceBuild(path, master, label string) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".new")
	if err := copyBuild(master, tmp, label); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

func copyBuild(master, dst, label string) error {
	if label == "" || len(label) > maxLabel || strings.ContainsAny(label, "\n\x00") {
		return fmt.Errorf("stand-in build label %q: want 1 to %d bytes, no newline", label, maxLabel)
	}
	if runtime.GOOS != "windows" {
		// Written by another process: a descriptor open for writing in
		// this one would reach every child a parallel test forks before
		// it execs, and running the new build then fails with ETXTBSY.
		// cp and the shell fork nothing while they write.
		return exec.Command("/bin/sh", "-c", `cp "$1" "$2" && printf '%s%s\n' "$3" "$4" >>"$2" && chmod 755 "$2"`,
			"sh", master, dst, BuildTrailer, label).Run()
	}
	if err := copyFile(master, dst); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(BuildTrailer + label + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// BuildLabel returns the label in the trailer of the executable at path,
// "" when it has none (a stand-in made by Install or Link).
func BuildLabel(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	n := int64(len(BuildTrailer) + maxLabel + 1)
	if fi.Size() < n {
		n = fi.Size()
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, fi.Size()-n); err != nil {
		return ""
	}
	tail := string(buf)
	if !strings.HasSuffix(tail, "\n") {
		return ""
	}
	i := strings.LastIndex(tail, BuildTrailer)
	if i < 0 {
		return ""
	}
	label := tail[i+len(BuildTrailer) : len(tail)-1]
	if strings.Contains(label, "\n") {
		return ""
	}
	return label
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

// Extension runs the stand-in's test-only behaviours; internal/standin/extra
// registers one with Extend.
type Extension interface {
	// Main runs a command the core does not know (run, the device model,
	// several starts, a --version that does more); handled is false for
	// the others.
	Main(s Script, exe, script string, args []string) (code int, handled bool)
	// Run runs an action that uses a test-only field.
	Run(a Action, exe string) int
}

var extension Extension

// Extend registers the test-only behaviours.
func Extend(e Extension) { extension = e }

// noExtension ends a script that needs a behaviour this build lacks.
func noExtension() int {
	fmt.Fprintln(os.Stderr, "stand-in ctrld: this build has only what --simulate needs")
	return 99
}

// Main runs the stand-in and returns its exit status.
func Main() int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "stand-in ctrld:", err)
		return 99
	}
	path := os.Getenv(EnvScript)
	if path == "" {
		path = SidecarPath(exe)
	}
	args := os.Args[1:]
	if extension != nil && len(args) > 0 && strings.HasPrefix(args[0], "__") {
		code, _ := extension.Main(Script{}, exe, path, args) // a helper process of a test-only action
		return code
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
	if extension != nil {
		if code, ok := extension.Main(s, exe, path, args); ok {
			return code
		}
	} else if s.Device != nil || s.VersionRun != nil || len(s.Starts) > 0 || len(s.Builds) > 0 || (len(args) > 0 && args[0] == "run") {
		return noExtension()
	}
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	switch {
	case len(args) == 1 && cmd == "--version":
		if s.Version == "" {
			fmt.Println("something else")
			return 1
		}
		fmt.Printf("ctrld version %s\n", s.Version)
		return 0
	case cmd == "start":
		return s.Start.Run(exe)
	case cmd == "status":
		return s.Status.Run(exe)
	case cmd == "restart":
		return s.Restart.Run(exe)
	case cmd == "uninstall":
		return s.Uninstall.Run(exe)
	}
	fmt.Fprintln(os.Stderr, "Error: unknown command for stand-in ctrld")
	return 1
}

// testOnly reports whether a uses a field only internal/standin/extra runs.
func (a Action) testOnly() bool {
	return a.Record != "" || a.NeedAlive != "" || a.RequirePIN != "" || a.Service != "" ||
		len(a.AppendFiles) > 0 || len(a.RemoveFiles) > 0 || len(a.MoveFiles) > 0 || len(a.RawStdout) > 0 ||
		a.CatFile != "" || a.FloodBytes > 0 || a.LongLine > 0 || a.Grandchild || a.Daemon != "" ||
		a.SelfKill != "" || a.SleepMS > 0 || a.IgnoreTerm || a.StampFile != ""
}

// Run does what a says and returns the exit status.
func (a Action) Run(exe string) int {
	if a.testOnly() {
		if extension == nil {
			return noExtension()
		}
		return extension.Run(a, exe)
	}
	if a.FileMissing() {
		return 1
	}
	a.WriteAll()
	a.Print()
	if a.SignalPPID != "" {
		SignalParent(a.SignalPPID)
	}
	if a.Hang {
		time.Sleep(time.Hour)
	}
	return a.Exit
}

// The core's steps, which the test-only behaviours interleave with theirs.

// FileMissing reports whether NeedFile names a file that is not there, as
// ctrld status fails with no service.
func (a Action) FileMissing() bool {
	if a.NeedFile == "" {
		return false
	}
	_, err := os.Stat(a.NeedFile)
	return err != nil
}

// WriteAll writes WriteFiles and the result file.
func (a Action) WriteAll() {
	for p, content := range a.WriteFiles {
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(content), 0o600)
	}
	if a.Result != nil {
		a.Result.write()
	}
}

// Print prints Stdout and Stderr.
func (a Action) Print() {
	for _, l := range a.Stdout {
		fmt.Fprintln(os.Stdout, l)
	}
	for _, l := range a.Stderr {
		fmt.Fprintln(os.Stderr, l)
	}
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
