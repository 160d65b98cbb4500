package cli

import (
	"runtime"
	"strings"
)

// TokenEnv is read when no token flag and no resolver is given.
const TokenEnv = "CTRLD_PROVISION_TOKEN"

// childEnv is ctrld's environment: the caller's, less the secrets the
// scripts pass in it and this program's own variables, with colours off. The caller's proxy settings
// (HTTPS_PROXY) reach ctrld on purpose.
func childEnv(env []string) []string {
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
