// Package simulate sets up --simulate: a temporary home, and a script for
// the stand-in ctrld (internal/standin, run as ctrld-install's own
// executable) that follows the failure contract and fails with the code it
// is given, so the whole pipeline can be watched without root, a network or
// a real ctrld.
package simulate

import (
	"os"
	"path/filepath"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// Version is the version the stand-in reports; OldVersion is reported when
// simulating CTRLD_VERSION_UNSUPPORTED.
const (
	Version    = "v1.6.0"
	OldVersion = "v1.0.0"
)

// DefaultTimeout is the budget of a simulation when --timeout is not given:
// long enough for every simulated path, short enough to watch a timeout.
const DefaultTimeout = 3 * time.Second

// World is a prepared simulation: where things are, and the installer
// failures the pipeline must meet on purpose.
type World struct {
	Home        string
	Ctrld       string // the executable to run as ctrld
	Argv0       string
	ResultFile  string
	ServiceFile string
	Env         []string // added to the child's environment
	NotRoot     bool
	HoldLock    bool
	MinVersion  *parse.Version
}

// Cleanup removes the simulation's temporary home.
func (w *World) Cleanup() { os.RemoveAll(w.Home) }

// New prepares a world in which the pipeline ends with c. self is
// ctrld-install's own executable. INSTALLER_USAGE is not simulated here:
// the caller fails as a usage error.
func New(c codes.Code, self string) (*World, error) {
	home, err := os.MkdirTemp("", "ctrld-install-simulate-*")
	if err != nil {
		return nil, err
	}
	w := &World{
		Home:        home,
		Ctrld:       self,
		Argv0:       standin.Name,
		ResultFile:  filepath.Join(home, "provision_result.json"),
		ServiceFile: filepath.Join(home, "ctrld.service"),
	}
	script := filepath.Join(home, "standin.json")
	w.Env = []string{standin.EnvScript + "=" + script}
	s := w.script(c)
	switch c.Name {
	case codes.CtrldNotFound:
		w.Ctrld = filepath.Join(home, "missing", "ctrld")
	case codes.InstallerFailed:
		w.Ctrld = filepath.Join(home, "ctrld")
		err = os.WriteFile(w.Ctrld, []byte("not a program\n"), 0o755)
	case codes.InstallerNotRoot:
		w.NotRoot = true
	case codes.InstallerBusy:
		w.HoldLock = true
	case codes.InstallerHomeUnsafe:
		// A home others may write to, as a copied C:\ControlD or a
		// chmod 777 makes it.
		err = os.Chmod(home, 0o777)
	case codes.CtrldVersionUnsupported:
		s.Version = OldVersion
		w.MinVersion = parse.MustParseVersion(Version)
	}
	if err == nil {
		err = standin.WriteScript(script, s)
	}
	if err != nil {
		w.Cleanup()
		return nil, err
	}
	return w, nil
}

// script is what ctrld does in a world that ends with c.
func (w *World) script(c codes.Code) standin.Script {
	started := []string{logLine("NTC", "Starting service")}
	s := standin.Script{
		Version: Version,
		Status:  standin.Action{NeedFile: w.ServiceFile, Stdout: []string{logLine("NTC", "Service is running")}},
	}
	installed := map[string]string{w.ServiceFile: "[Unit]\nDescription=simulated ctrld\n"}
	switch {
	case c.IsOK():
		s.Start = standin.Action{WriteFiles: installed, Stdout: append(started, logLine("NTC", "Service started"))}
	case c.Name == codes.ServiceNotRunning:
		s.Start = standin.Action{WriteFiles: installed, Stdout: append(started, logLine("NTC", "Service started"))}
		s.Status = standin.Action{Stdout: []string{logLine("NTC", "Service is stopped")}, Exit: 1}
	case c.Name == codes.ServiceNotRegistered:
		s.Start = standin.Action{Stdout: append(started, logLine("NTC", "Service started"))}
	case c.Name == codes.DeactivationPinRequired:
		s.Start = standin.Action{Stdout: append(started, logLine("ERR", "deactivation pin is invalid")), Exit: c.Exit}
	case c.Name == codes.CtrldTimeout:
		s.Start = standin.Action{Stdout: started, Hang: true, Exit: 1}
	case c.Name == codes.InstallerInterrupted:
		// Stop the parent the way an MDM agent's time limit would.
		s.Start = standin.Action{Stdout: started, SignalPPID: "TERM", Hang: true, Exit: 1}
	case c.Name == codes.CtrldFailedUnclassified:
		s.Start = standin.Action{Stdout: append(started, logLine("ERR", "something nobody has seen before happened")), Exit: 1}
	case c.Stage == codes.StageInstaller:
		// Installer failures are arranged by the world, not by ctrld.
		s.Start = standin.Action{Exit: 1}
	default:
		s.Start = standin.Action{
			Result: &standin.ResultFile{Path: w.ResultFile, Stage: string(c.Stage), Code: c.Name, Exit: c.Exit, Message: "simulated failure"},
			Stdout: append(started, logLine("FTL", "simulated failure"), codes.FailureLine(codes.VerbProvisioning, c)),
			Exit:   c.Exit,
		}
	}
	return s
}

func logLine(level, msg string) string {
	return time.Now().Format(time.StampMilli) + " " + level + " " + msg
}
