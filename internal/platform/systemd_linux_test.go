package platform

import "testing"

// Only a unit file where systemd loads units is asked about, and never
// from a binary built for the tests.
func TestSystemdForOnlyItsUnitDirectories(t *testing.T) {
	for _, p := range []string{"/tmp/x/etc/systemd/system/ctrld.service", "/etc/init.d/ctrld", "/etc/systemd/system/ctrld", "ctrld.service"} {
		if _, ok := SystemdFor(p); ok {
			t.Errorf("SystemdFor(%q) = ok", p)
		}
	}
	for _, d := range []string{"/etc/systemd/system", "/lib/systemd/system/"} {
		if !unitDir(d) {
			t.Errorf("unitDir(%q) = false", d)
		}
	}
}
