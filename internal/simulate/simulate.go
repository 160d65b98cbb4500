// Package simulate is the built-in stand-in for ctrld behind --simulate:
// a ctrld that follows the failure contract (result file, identifier line,
// exit code) and fails with the code it is given, so the whole pipeline can
// be watched without root, a network or a real ctrld.
//
// The stand-in is ctrld-install's own executable, started with argv[0]
// "ctrld" and the code in its environment. Both are required, so neither a
// binary renamed to ctrld nor a stray environment variable turns a real run
// into a simulation.
package simulate

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

// Environment variables that carry the simulation to the stand-in.
const (
	EnvCode = "CTRLD_INSTALL_SIMULATE_CODE"
	EnvHome = "CTRLD_INSTALL_SIMULATE_HOME"
)

// Argv0 is the name the stand-in is started under.
const Argv0 = "ctrld"

// Version is the version the stand-in reports; OldVersion is reported when
// simulating CTRLD_VERSION_UNSUPPORTED.
const (
	Version    = "v1.6.0"
	OldVersion = "v1.0.0"
)

// Paths of the stand-in's files inside the simulation's temporary home.
func ResultFile(home string) string  { return filepath.Join(home, "provision_result.json") }
func ServiceFile(home string) string { return filepath.Join(home, "ctrld.service") }

// Plan is how the pipeline sets up the world for one simulated code.
type Plan struct {
	Code         codes.Code
	MissingCtrld bool // point --ctrld at a path that does not exist
	BrokenCtrld  bool // point --ctrld at a file that cannot be executed
	NotRoot      bool // the privilege check fails
	UsageError   bool // fail as a usage error
	HoldLock     bool // another holder keeps the home directory's lock
	Hangs        bool // ctrld start never returns, so a short default budget applies
	MinVersion   string
}

// PlanFor returns the plan that makes the pipeline end with c.
func PlanFor(c codes.Code) Plan {
	p := Plan{Code: c}
	switch c.Name {
	case codes.CtrldNotFound:
		p.MissingCtrld = true
	case codes.InstallerFailed:
		p.BrokenCtrld = true
	case codes.InstallerNotRoot:
		p.NotRoot = true
	case codes.InstallerUsage:
		p.UsageError = true
	case codes.InstallerBusy:
		p.HoldLock = true
	case codes.CtrldTimeout:
		p.Hangs = true
	case codes.CtrldVersionUnsupported:
		p.MinVersion = Version
	}
	return p
}

// DefaultTimeout is the budget of a simulation when --timeout is not given:
// long enough for every simulated path, short enough to watch a timeout.
const DefaultTimeout = 3 * time.Second

// IsStandIn reports whether this process was started as the stand-in.
func IsStandIn(argv0 string, getenv func(string) string) bool {
	return filepath.Base(argv0) == Argv0 && getenv(EnvCode) != "" && getenv(EnvHome) != ""
}

// Main runs the stand-in ctrld and returns its exit status.
func Main(args []string, getenv func(string) string, stdout io.Writer) int {
	c, ok := codes.Lookup(getenv(EnvCode))
	home := getenv(EnvHome)
	if !ok || home == "" {
		fmt.Fprintln(stdout, "Error: unknown simulation")
		return 1
	}
	switch {
	case len(args) == 1 && args[0] == "--version":
		v := Version
		if c.Name == codes.CtrldVersionUnsupported {
			v = OldVersion
		}
		fmt.Fprintf(stdout, "ctrld version %s\n", v)
		return 0
	case len(args) >= 1 && args[0] == "status":
		if c.Name == codes.ServiceNotRunning {
			fmt.Fprintln(stdout, logLine("NTC", "Service is stopped"))
			return 1
		}
		if _, err := os.Stat(ServiceFile(home)); err != nil {
			fmt.Fprintln(stdout, logLine("ERR", "the service is not installed"))
			return 1
		}
		fmt.Fprintln(stdout, logLine("NTC", "Service is running"))
		return 0
	case len(args) >= 1 && args[0] == "start":
		return start(c, home, stdout)
	}
	fmt.Fprintln(stdout, "Error: unknown command")
	return 1
}

func start(c codes.Code, home string, stdout io.Writer) int {
	fmt.Fprintln(stdout, logLine("NTC", "Starting service"))
	switch c.Name {
	case codes.OK, codes.ServiceNotRunning:
		if err := os.WriteFile(ServiceFile(home), []byte("[Unit]\nDescription=simulated ctrld\n"), 0o644); err != nil {
			return 1
		}
		fmt.Fprintln(stdout, logLine("NTC", "Service started"))
		return 0
	case codes.ServiceNotRegistered:
		fmt.Fprintln(stdout, logLine("NTC", "Service started"))
		return 0
	case codes.DeactivationPinRequired:
		fmt.Fprintln(stdout, logLine("ERR", "deactivation pin is invalid"))
		return c.Exit
	case codes.CtrldTimeout:
		time.Sleep(time.Hour)
		return 1
	case codes.InstallerInterrupted:
		// Stop the parent the way an MDM agent's time limit would.
		interruptParent()
		time.Sleep(time.Hour)
		return 1
	case codes.CtrldFailedUnclassified:
		fmt.Fprintln(stdout, logLine("ERR", "something nobody has seen before happened"))
		return 1
	}
	if c.Stage == codes.StageInstaller {
		// Installer failures are arranged by the pipeline's plan, not by ctrld.
		return 1
	}
	rf := map[string]any{
		"version": 1, "timestamp": time.Now().UTC().Format(time.RFC3339),
		"stage": c.Stage, "code": c.Name, "exit_code": c.Exit,
		"message": "simulated failure",
	}
	b, _ := json.Marshal(rf)
	tmp := ResultFile(home) + ".tmp"
	if os.WriteFile(tmp, b, 0o600) == nil {
		_ = os.Rename(tmp, ResultFile(home))
	}
	fmt.Fprintln(stdout, logLine("FTL", "simulated failure"))
	fmt.Fprintf(stdout, "provisioning failed: stage=%s code=%s (exit %d)\n", c.Stage, c.Name, c.Exit)
	return c.Exit
}

func logLine(level, msg string) string {
	return time.Now().Format(time.StampMilli) + " " + level + " " + msg
}
