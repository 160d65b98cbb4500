//go:build linux

package realsuite

import (
	"testing"
	"time"
)

// Installed with the token under a real systemd, left alone by a re-run,
// verified and uninstalled.
func TestSystemdLifecycle(t *testing.T) {
	scenario(t, innerSysD, 4*time.Minute, func(d *device) {
		d.putCtrld("1.5.0")
		r := d.run(installLimit, "", "--token-file", d.tokenFile, "--timeout", "2m")
		d.expect(r, 0, "plan: nothing is installed", "provisioning succeeded (exit 0)")
		d.expectRecord("ok", "OK", "provisioned")
		if state, _ := systemctl("is-active", "ctrld"); state != "active" {
			t.Errorf("systemctl is-active ctrld: %q, want active", state)
		}
		d.daemonRuns("1.5.0")
		d.answers(settle, true)
		pid := d.daemon()
		t.Logf("healthy: ctrld status exits %d", d.ctrldStatus())

		r = d.run(installLimit, "", "--token-file", d.tokenFile, "--timeout", "2m")
		d.expect(r, 0, "already provisioned, nothing to do (exit 0)")
		if now := d.daemon(); now != pid {
			t.Errorf("the re-run replaced the daemon (pid %d, was %d)", now, pid)
		}
		r = d.run(installLimit, "verify", "--timeout", "1m")
		d.expect(r, 0, "verify succeeded (exit 0)")

		r = d.run(installLimit, "uninstall", "--timeout", "2m")
		d.expect(r, 0, "uninstall succeeded (exit 0)")
		d.expectRecord("ok", "OK", "uninstalled")
		if state, _ := systemctl("is-active", "ctrld"); state == "active" || state == "activating" {
			t.Errorf("systemctl is-active ctrld after uninstall: %q", state)
		}
		d.goneAfterUninstall()
	})
}

// ctrld's unit says Restart=always, RestartSec=120: a killed daemon is
// restarted only two minutes later, and meanwhile "ctrld status" calls the
// service running (ctrld-1.5.0-systemd-status-killed.txt) and "systemctl
// start" waits behind the pending restart (systemd-252-auto-restart.txt).
// A run must bring the daemon back within a 60 s budget regardless.
func TestSystemdHeldRestartRepairedWithoutToken(t *testing.T) {
	scenario(t, innerSysD, 4*time.Minute, func(d *device) { heldRestart(d, false) })
}

// The same, the MDM re-running the install with the token it was
// provisioned with.
func TestSystemdHeldRestartRepairedWithToken(t *testing.T) {
	scenario(t, innerSysD, 4*time.Minute, func(d *device) { heldRestart(d, true) })
}

func heldRestart(d *device, withToken bool) {
	t := d.t
	d.putCtrld("1.5.0")
	r := d.run(installLimit, "", "--token-file", d.tokenFile, "--timeout", "2m")
	d.expect(r, 0, "provisioning succeeded (exit 0)")
	d.answers(settle, true)

	d.killDaemon()
	d.waitFor(10*time.Second, "systemd to hold the restart", func() bool {
		sub, _ := systemctl("show", "-p", "SubState", "--value", "ctrld")
		return sub == "auto-restart"
	})
	active, activeCode := systemctl("is-active", "ctrld")
	t.Logf("restart held: systemctl is-active ctrld: %q (exit %d); ctrld status exits %d", active, activeCode, d.ctrldStatus())

	args := []string{"--timeout", "60s"}
	if withToken {
		args = append(args, "--token-file", d.tokenFile)
	}
	r = d.run(90*time.Second, "", args...)
	d.expect(r, 0, "repair applied, ctrld restarted (exit 0)")
	if r.elapsed > 65*time.Second {
		t.Errorf("the repair took %s, over its 60 s budget", r.elapsed.Round(time.Second))
	}
	d.expectRecord("ok", "OK", "repaired")
	if state, _ := systemctl("is-active", "ctrld"); state != "active" {
		t.Errorf("systemctl is-active ctrld after the repair: %q, want active", state)
	}
	d.daemonRuns("1.5.0")
	d.answers(settle, true)
}
