package install

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/home"
	"github.com/Control-D-Inc/ctrld-install/internal/lock"
	"github.com/Control-D-Inc/ctrld-install/internal/platform"
	"github.com/Control-D-Inc/ctrld-install/internal/runner"
)

// OSDeps are the real machine's dependencies.
func OSDeps() Deps {
	return Deps{
		Run:               runner.Run,
		Sleep:             sleep,
		Now:               time.Now,
		Privileged:        platform.Privileged,
		ServiceRegistered: platform.ServiceRegistered,
		CheckHome:         home.Prepare,
		Executable:        executable,
		Definition:        platform.ServiceDefinition,
		LockHeld:          lockHeld,
		DaemonRunsBinary:  platform.DaemonRunsBinary,
		DaemonExecutable:  platform.DaemonExecutable,
		Systemd:           platform.SystemdFor,
		Lock:              lock.Acquire,
	}
}

// executable reports whether p is a regular file ctrld-install may run.
func executable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if runtime.GOOS == "windows" {
		return strings.EqualFold(filepath.Ext(p), ".exe")
	}
	return fi.Mode().Perm()&0o111 != 0
}

func lockHeld(home string) bool {
	held, err := lock.Held(home)
	return err == nil && held
}
