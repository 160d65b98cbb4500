package cli

import (
	"slices"
	"testing"
)

func TestChildEnvDropsEverySecretVariable(t *testing.T) {
	t.Parallel()
	env := childEnv([]string{"PATH=/bin", "HTTPS_PROXY=http://proxy:3128", "CTRLD_PROVISION_TOKEN=a",
		"CTRLD_PROVISION_RESOLVER=b", "CTRLD_DEACTIVATION_PIN=1", "CTRLD_INSTALL_TIMEOUT=5m", "NO_COLOR=0"})
	if want := []string{"PATH=/bin", "HTTPS_PROXY=http://proxy:3128", "NO_COLOR=1"}; !slices.Equal(env, want) {
		t.Errorf("childEnv = %q, want %q: the caller's proxy reaches ctrld; no secret does", env, want)
	}
}
