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

// TokenEnv is read when no token flag and no resolver is given.
const TokenEnv = "CTRLD_PROVISION_TOKEN"

// ChildEnv is ctrld's environment: the caller's, less the secrets the
// scripts pass in it and this program's own variables, with colours off. The caller's proxy settings
// (HTTPS_PROXY) reach ctrld on purpose.
func ChildEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		// The scripts' secrets travel in CTRLD_PROVISION_* and
		// CTRLD_DEACTIVATION_*: none of them is ctrld's business.
		if envIs(name, "NO_COLOR") || envHasPrefix(name, "CTRLD_INSTALL_") ||
			envHasPrefix(name, "CTRLD_PROVISION_") || envHasPrefix(name, "CTRLD_DEACTIVATION_") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "NO_COLOR=1")
}

// Windows environment names ignore case, and os.Getenv finds the token
// under any spelling, so it must be removed under any spelling too.
func envIs(name, want string) bool {
	if runtime.GOOS == "windows" {
		return strings.EqualFold(name, want)
	}
	return name == want
}

func envHasPrefix(name, prefix string) bool {
	return len(name) >= len(prefix) && envIs(name[:len(prefix)], prefix)
}

func lockHeld(home string) bool {
	held, err := lock.Held(home)
	return err == nil && held
}
