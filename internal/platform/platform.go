// Package platform holds what differs between macOS, Linux and Windows:
// default paths, the privilege check and the service registration check.
package platform

import (
	"os"
	"path/filepath"
)

// Defaults are the install flags' platform defaults.
type Defaults struct {
	Home        string   // ctrld's home directory
	Ctrld       string   // the ctrld binary when none is beside ctrld-install
	ServiceFile string   // the service definition; "" where the service manager is asked instead
	ServiceLogs []string // where ctrld's daemon writes its own stdout and stderr
	// ServicePIDFiles list the processes of the service where the service
	// manager keeps them in files (systemd's control group); a SysV script
	// names its PID file itself.
	ServicePIDFiles []string
}

// Current holds this platform's defaults, re-rooted under testRoot in a
// binary built for tests.
var Current = reroot(defaults())

// testRoot is set only in binaries built by the test suite (-ldflags -X):
// every default path then lies under that temporary directory, so a test
// that relies on a default never touches the real machine.
var testRoot string

func reroot(d Defaults) Defaults {
	if testRoot == "" {
		return d
	}
	j := func(p string) string {
		if p == "" {
			return ""
		}
		return filepath.Join(testRoot, filepath.FromSlash(p))
	}
	d.Home, d.Ctrld, d.ServiceFile = j(d.Home), j(d.Ctrld), j(d.ServiceFile)
	logs := make([]string, len(d.ServiceLogs))
	for i, p := range d.ServiceLogs {
		logs[i] = j(p)
	}
	d.ServiceLogs = logs
	pids := make([]string, len(d.ServicePIDFiles))
	for i, p := range d.ServicePIDFiles {
		pids[i] = j(p)
	}
	d.ServicePIDFiles = pids
	return d
}

// ctrldBesideInstaller returns ctrld (ctrld.exe) in the directory of the
// running executable if it exists there: the pkg and the Windows package ship
// both binaries side by side.
func ctrldBesideInstaller(name string) string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	p := filepath.Join(filepath.Dir(exe), name)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
		return p
	}
	return ""
}

// CtrldPath returns the ctrld binary to run when --ctrld is not given:
// the one beside ctrld-install, else d's.
func (d Defaults) CtrldPath() string {
	if p := ctrldBesideInstaller(ctrldName); p != "" {
		return p
	}
	return d.Ctrld
}

func regularFile(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().IsRegular()
}

// SamePath compares two paths of binaries as this system's file names
// compare.
func SamePath(a, b string) bool { return samePath(a, b) }

// SameBinary reports whether the binary a service definition starts and
// the ctrld binary a run was given are one file. ctrld writes the path its
// own executable resolves to, links followed, so a --ctrld reached through
// a symlink (or a /usr/local that is one, as on Fedora Silverblue) is
// spelled otherwise and is still the same binary.
func SameBinary(service, given string) bool {
	return sameBinary(service, given, statOrNil(service), statOrNil(given))
}

// sameBinary decides from what os.Stat, which follows links, found at each
// path (nil: nothing there). Two files that exist are the same when they
// are one file; a path that names nothing any more can only be compared
// as it is spelled.
func sameBinary(a, b string, fa, fb os.FileInfo) bool {
	if fa != nil && fb != nil {
		return os.SameFile(fa, fb)
	}
	return samePath(a, b)
}

func statOrNil(p string) os.FileInfo {
	fi, err := os.Stat(p)
	if err != nil {
		return nil
	}
	return fi
}
