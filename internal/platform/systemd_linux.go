package platform

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Systemd is how ctrld-install asks systemd itself about ctrld's unit,
// where systemd manages it: ctrld status calls a unit that waits out its
// RestartSec (120 s) "running", exit 0, with no daemon, and ctrld restart
// of such a unit waits the pause out (ctrld-1.5.0-systemd-*.txt), while
// systemctl knows the state and its restart does not wait.
type Systemd struct {
	Systemctl string // absolute path of systemctl
	Unit      string // ctrld's unit: ctrld.service
}

// SystemdFor is systemd's view of the service whose definition is
// serviceFile, when that is a unit file and systemd runs; ok is false
// otherwise (SysV, launchd, Windows), and ctrld's own commands are used.
func SystemdFor(serviceFile string) (Systemd, bool) {
	// A binary built for the tests has its service under a temporary
	// directory: the host's systemd, which would restart a unit of that
	// name, is never its service manager.
	if testRoot != "" || !strings.HasSuffix(serviceFile, ".service") || !unitDir(filepath.Dir(serviceFile)) {
		return Systemd{}, false
	}
	if fi, err := os.Stat("/run/systemd/system"); err != nil || !fi.IsDir() {
		return Systemd{}, false
	}
	p, err := exec.LookPath("systemctl")
	if err != nil {
		return Systemd{}, false
	}
	if p, err = filepath.Abs(p); err != nil {
		return Systemd{}, false
	}
	return Systemd{Systemctl: p, Unit: filepath.Base(serviceFile)}, true
}

// unitDir reports whether dir is one systemd loads units from: a
// --service-file elsewhere is not a unit systemd manages under its name.
func unitDir(dir string) bool {
	switch filepath.Clean(dir) {
	case "/etc/systemd/system", "/run/systemd/system", "/lib/systemd/system", "/usr/lib/systemd/system", "/usr/local/lib/systemd/system":
		return true
	}
	return false
}
