// Package platform holds what differs between macOS, Linux and Windows:
// default paths, the privilege check and the service registration check.
package platform

import (
	"os"
	"path/filepath"
)

// Defaults are the install flags' platform defaults.
type Defaults struct {
	Home        string // ctrld's home directory
	Ctrld       string // the ctrld binary when none is beside ctrld-install
	ServiceFile string // the service definition; "" where the service manager is asked instead
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

// DefaultCtrld returns the ctrld binary to run when --ctrld is not given.
func DefaultCtrld() string {
	if p := ctrldBesideInstaller(ctrldName); p != "" {
		return p
	}
	return Current.Ctrld
}

func regularFile(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode().IsRegular()
}
