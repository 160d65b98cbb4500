package realsuite

import (
	"testing"
	"time"
)

// Run limits: ctrld start takes about 5 s and restart up to 13 s; each
// ctrld-install run gets its own --timeout plus a margin to be killed at.
const (
	installLimit = 3 * time.Minute
	settle       = 10 * time.Second
)

// Installed with the token, left alone by a re-run, verified, repaired
// without the token after its daemon is killed, upgraded when a package
// replaces the binary, and uninstalled.
func TestSysVLifecycle(t *testing.T) {
	scenario(t, innerSysV, 5*time.Minute, func(d *device) {
		d.putCtrld("1.4.9")
		r := d.run(installLimit, "", "--token-file", d.tokenFile, "--timeout", "2m")
		d.expect(r, 0, "plan: nothing is installed", "provisioning succeeded (exit 0)")
		d.expectRecord("ok", "OK", "provisioned")
		d.daemonRuns("1.4.9")
		d.answers(settle, true)
		d.serviceNames(resolverA)
		pid := d.daemon()

		r = d.run(installLimit, "", "--token-file", d.tokenFile, "--timeout", "2m")
		d.expect(r, 0, "already provisioned, nothing to do (exit 0)")
		d.expectRecord("ok", "OK", "skipped")
		if now := d.daemon(); now != pid {
			t.Errorf("the re-run replaced the daemon (pid %d, was %d)", now, pid)
		}

		r = d.run(installLimit, "verify", "--timeout", "1m")
		d.expect(r, 0, "verify succeeded (exit 0)")

		d.killDaemon()
		if code := d.ctrldStatus(); code == 0 {
			t.Errorf("ctrld status exits 0 with the daemon killed")
		}
		r = d.run(installLimit, "", "--timeout", "2m")
		d.expect(r, 0, "plan: the service is registered but not running", "repair applied, ctrld restarted (exit 0)")
		d.expectRecord("ok", "OK", "repaired")
		d.daemonRuns("1.4.9")
		d.answers(settle, true)

		d.putCtrld("1.5.0")
		r = d.run(installLimit, "", "--timeout", "2m")
		d.expect(r, 0, "plan: the ctrld binary on disk is not the one the running daemon was started from", "upgrade applied, ctrld restarted (exit 0)")
		d.expectRecord("ok", "OK", "upgraded")
		d.daemonRuns("1.5.0")
		d.answers(settle, true)

		r = d.run(installLimit, "uninstall", "--timeout", "2m")
		d.expect(r, 0, "uninstall succeeded (exit 0)")
		d.expectRecord("ok", "OK", "uninstalled")
		if pid := d.daemon(); pid != 0 {
			t.Errorf("a daemon (pid %d) runs after uninstall", pid)
		}
		d.silent()
	})
}
