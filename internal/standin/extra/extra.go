// Package extra is the stand-in's test-only behaviours: what the tests and
// the bench need of a ctrld and --simulate does not (floods, long lines,
// grandchildren holding the output, daemons, the modelled service manager,
// a record of each run's argv, and ctrld 1.5.0's listener, self-check and
// builds swapped by rename). The stand-in binaries they build import it
// for its effect; ctrld-install does not, so none of this ships.
package extra

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

func init() { standin.Extend(ext{}) }

// device is the modelled service manager a Script's Device describes.
type device standin.Device

type ext struct{}

// Main runs the commands only tests use: the helper processes of an
// action, the daemon, the device model, several starts, and a --version
// that does more than print.
func (ext) Main(s standin.Script, exe, script string, args []string) (int, bool) {
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	switch {
	case cmd == "__hold" || cmd == "__daemon":
		// The grandchild keeps the inherited stdout and stderr open; the
		// daemon has them on its log and serves.
		time.Sleep(time.Hour)
		return 0, true
	case cmd == "run": // started by the service manager
		if b, ok := ownBuild(s); ok && b.RunExit != 0 {
			// The dying build: gone at once, so the init script's start
			// fails or its restart finds no daemon a moment later, as
			// the capture's "exit status 1" says either way.
			return b.RunExit, true
		}
		return daemon(s, args[1:]), true
	case len(args) == 1 && cmd == "--version" && len(s.Builds) > 0:
		b, ok := ownBuild(s)
		if !ok || b.Version == "" {
			return 0, false
		}
		fmt.Printf("ctrld version %s\n", b.Version)
		if s.VersionRun != nil {
			return s.VersionRun.Run(exe), true
		}
		return 0, true
	case s.Device != nil && cmd != "--version":
		return runDevice(s, exe, script, args), true
	case len(args) == 1 && cmd == "--version" && s.VersionRun != nil && s.Version != "":
		fmt.Printf("ctrld version %s\n", s.Version)
		return s.VersionRun.Run(exe), true
	case cmd == "start" && len(s.Starts) > 0:
		return s.Starts[min(nextRun(script), len(s.Starts)-1)].Run(exe), true
	}
	return 0, false
}

// runDevice runs a command against the modelled service manager, then the
// command's Action.
func runDevice(s standin.Script, exe, script string, args []string) int {
	d := (*device)(s.Device)
	name, rest, under := args[0], args[1:], false
	if name == "service" && len(rest) > 0 {
		name, rest, under = rest[0], rest[1:], true
	}
	if d.Form == standin.FormLegacy && !under && name != "start" {
		// ctrld 1.2's cobra: status, restart and uninstall are not
		// top-level commands.
		fmt.Fprintf(os.Stderr, "Error: unknown command %q for \"ctrld\"\nRun 'ctrld --help' for usage.\n", name)
		return 1
	}
	var code int
	var act standin.Action
	switch name {
	case "start":
		code, act = d.start(exe, rest), s.Start
		if len(s.Starts) > 0 {
			act = s.Starts[min(nextRun(script), len(s.Starts)-1)]
		}
	case "status":
		code, act = d.status(), s.Status
	case "restart":
		code, act = d.restart(d.Listener != "" || len(d.Resolvers) > 0 || len(s.Builds) > 0), s.Restart
	case "uninstall":
		code, act = d.uninstall(exe), s.Uninstall
	default:
		fmt.Fprintln(os.Stderr, "Error: unknown command for stand-in ctrld")
		return 1
	}
	if ec := act.Run(exe); act.Exit != 0 {
		code = ec
	}
	return code
}

// ownBuild is the Build of the running stand-in, named by the trailer of
// its own executable. On Linux that is /proc/self/exe, the file this
// process runs even after another build was renamed over its path;
// elsewhere the path it was started from.
func ownBuild(s standin.Script) (standin.Build, bool) {
	if len(s.Builds) == 0 {
		return standin.Build{}, false
	}
	self := "/proc/self/exe"
	if runtime.GOOS != "linux" {
		var err error
		if self, err = os.Executable(); err != nil {
			return standin.Build{}, false
		}
	}
	label := standin.BuildLabel(self)
	if label == "" {
		return standin.Build{}, false
	}
	b, ok := s.Builds[label]
	return b, ok
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

// Run applies every field of a, in field order.
func (ext) Run(a standin.Action, exe string) int {
	if a.IgnoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	if a.Record != "" {
		appendRecord(a.Record, "start")
	}
	if a.FileMissing() {
		return 1
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
	a.WriteAll()
	a.Print()
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
		standin.SignalParent(a.SignalPPID)
	}
	if a.SelfKill != "" {
		standin.Signal(readPID(a.SelfKillPID), a.SelfKill)
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
