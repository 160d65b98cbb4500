//go:build linux

package realsuite

import (
	"strings"
	"syscall"
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
		} else {
			t.Logf("daemon killed: ctrld 1.4.9 status exits %d", code)
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
		d.goneAfterUninstall()
	})
}

// ctrld 1.2.1 has no top-level status, restart or uninstall: ctrld-install
// must use "ctrld service ..." for it.
func TestSysV121CommandForms(t *testing.T) {
	scenario(t, innerSysV, 4*time.Minute, func(d *device) {
		d.pretendWSL()
		d.putCtrld("1.2.1")
		r := d.run(installLimit, "", "--resolver", resolverA, "--timeout", "2m")
		d.expect(r, 0, "plan: nothing is installed", "provisioning succeeded (exit 0)")
		d.daemonRuns("1.2.1")
		// 1.2.1 does not answer ctrld.test. itself: any answer will do.
		d.answers(settle, false)

		r = d.run(installLimit, "verify", "--timeout", "1m")
		d.expect(r, 0, "verify succeeded (exit 0)")

		d.killDaemon()
		r = d.run(installLimit, "", "--timeout", "2m")
		d.expect(r, 0, "plan: the service is registered but not running", "repair applied, ctrld restarted (exit 0)")
		d.daemonRuns("1.2.1")
		d.answers(settle, false)

		r = d.run(installLimit, "uninstall", "--timeout", "2m")
		d.expect(r, 0, "uninstall succeeded (exit 0)")
		d.goneAfterUninstall()
	})
}

// Another resolver is provisioned again, and the service then names it.
func TestSysVResolverChange(t *testing.T) {
	scenario(t, innerSysV, 3*time.Minute, func(d *device) {
		d.putCtrld("1.5.0")
		r := d.run(installLimit, "", "--resolver", resolverA, "--timeout", "2m")
		d.expect(r, 0, "provisioning succeeded (exit 0)")
		r = d.run(installLimit, "", "--resolver", resolverB, "--timeout", "2m")
		d.expect(r, 0, "plan: configuration changed: resolver", "provisioning succeeded (exit 0)")
		d.expectRecord("ok", "OK", "provisioned")
		d.serviceNames(resolverB)
		d.daemonRuns("1.5.0")
		d.answers(settle, true)
	})
}

// A resolver the API does not know: ctrld 1.5.0 removes the running
// service before it learns that (ctrld-1.5.0-change-bad-resolver.txt), so
// the change is rolled back to the kept provisioning; asked again, the
// healthy service is not touched.
func TestSysVBadResolverRolledBack(t *testing.T) {
	scenario(t, innerSysV, 4*time.Minute, func(d *device) {
		d.putCtrld("1.5.0")
		r := d.run(installLimit, "", "--resolver", resolverA, "--timeout", "2m")
		d.expect(r, 0, "provisioning succeeded (exit 0)")

		r = d.run(installLimit, "", "--resolver", resolverBad, "--timeout", "2m")
		d.expect(r, 33, "plan: configuration changed: resolver", "rolled back: ctrld 1.5.0 is running again as before",
			"provisioning failed: stage=bootstrap code=API_DEVICE_INVALID (exit 33)")
		d.expectRecord("failed", "API_DEVICE_INVALID", "rolled-back")
		if rec := d.record(); rec.Rollback != "ok" {
			t.Errorf("record says rollback=%q, want ok", rec.Rollback)
		}
		d.serviceNames(resolverA)
		d.daemonRuns("1.5.0")
		d.answers(settle, true)
		pid := d.daemon()

		r = d.run(installLimit, "", "--resolver", resolverBad, "--timeout", "2m")
		d.expect(r, 33, "plan: this configuration was rolled back here before",
			"provisioning failed: stage=bootstrap code=API_DEVICE_INVALID (exit 33)")
		if now := d.daemon(); now != pid {
			t.Errorf("the refused request touched the daemon (pid %d, was %d)", now, pid)
		}
		d.answers(settle, true)
	})
}

// A new build whose daemon dies at start is rolled back to the kept build;
// put there again by the package, it is put back without a restart.
func TestSysVDyingBuildRolledBack(t *testing.T) {
	scenario(t, innerSysV, 4*time.Minute, func(d *device) {
		d.putCtrld("1.5.0")
		r := d.run(installLimit, "", "--resolver", resolverA, "--timeout", "2m")
		d.expect(r, 0, "provisioning succeeded (exit 0)")

		d.putDyingBuild()
		r = d.run(installLimit, "", "--timeout", "2m")
		d.expect(r, 52, "plan: the ctrld binary on disk is not the one the running daemon was started from",
			"rolled back: ctrld 1.5.0 is running again as before",
			"provisioning failed: stage=service code=SERVICE_START_FAILED (exit 52)")
		d.expectRecord("failed", "SERVICE_START_FAILED", "rolled-back")
		d.onDisk("1.5.0")
		d.daemonRuns("1.5.0")
		d.answers(settle, true)
		pid := d.daemon()

		d.putDyingBuild()
		r = d.run(installLimit, "", "--timeout", "2m")
		d.expect(r, 52, "plan: this ctrld build was rolled back here before",
			"provisioning failed: stage=service code=SERVICE_START_FAILED (exit 52)")
		d.onDisk("1.5.0")
		if now := d.daemon(); now != pid {
			t.Errorf("the refused build touched the daemon (pid %d, was %d)", now, pid)
		}
		d.answers(settle, true)
	})
}

// ctrld-install cut short (SIGKILL, an MDM agent's own time limit; SIGTERM,
// a shutdown) while it applies an upgrade to a dying build, once ctrld
// restart has stopped the old daemon: the next run, with or without the
// secret, finds the transaction cut short and rolls it back, on 1.4.9 and
// 1.5.0.
func TestSysVKilledMidUpgradeFinishedByNextRun(t *testing.T) {
	cutShortUpgrade(t, "1.5.0", syscall.SIGKILL, nil)
}

func TestSysVTerminatedMidUpgradeFinishedByNextRunWithSecret(t *testing.T) {
	cutShortUpgrade(t, "1.4.9", syscall.SIGTERM, []string{"--resolver", resolverA})
}

func cutShortUpgrade(t *testing.T, version string, sig syscall.Signal, secret []string) {
	scenario(t, innerSysV, 4*time.Minute, func(d *device) {
		d.putCtrld(version)
		r := d.run(installLimit, "", "--resolver", resolverA, "--timeout", "2m")
		d.expect(r, 0, "provisioning succeeded (exit 0)")

		d.putDyingBuild()
		// Once ctrld restart has stopped the old daemon: the device is
		// then worse than before, and only the next run can make it whole.
		old := d.daemon()
		d.cutShort(sig, "applying", func() bool { return old == 0 || d.daemon() != old }, "--timeout", "2m")
		d.waitFor(time.Minute, "ctrld restart to end", func() bool { return len(ctrldCommands("restart")) == 0 })
		t.Logf("left by the cut-short run: daemon pid %d, ctrld status exit %d", d.daemon(), d.ctrldStatus())

		st := d.run(time.Minute, "status", "--format", "json")
		if !strings.Contains(st.stdout, `"code":"INSTALLER_INTERRUPTED"`) {
			t.Errorf("status does not report the run cut short as INSTALLER_INTERRUPTED")
		}
		if r := d.run(time.Minute, "verify", "--timeout", "1m"); r.code == 0 {
			t.Errorf("verify called a device with a change cut short healthy")
		}

		r = d.run(installLimit, "", append([]string{"--timeout", "2m"}, secret...)...)
		if r.code == 0 {
			t.Errorf("the run that finished the cut-short upgrade exited 0, want its verification's failure")
		}
		if !failureLine.MatchString(r.last()) {
			t.Errorf("last line %q is not a failure line", r.last())
		}
		if !strings.Contains(r.stdout, "ctrld-install: rolled back: ctrld "+version+" is running again as before\n") {
			t.Errorf("the cut-short upgrade was not rolled back")
		}
		if rec := d.record(); rec.Action != "rolled-back" || rec.Rollback != "ok" {
			t.Errorf("record says action=%q rollback=%q, want rolled-back ok", rec.Action, rec.Rollback)
		}
		d.onDisk(version)
		d.daemonRuns(version)
		d.answers(settle, true)
	})
}

// A change of resolver cut short once ctrld 1.5.0's start has removed the
// running service (it does so before it asks the API): the next run brings
// the kept provisioning back.
func TestSysVKilledMidResolverChangeFinishedByNextRun(t *testing.T) {
	scenario(t, innerSysV, 4*time.Minute, func(d *device) {
		d.putCtrld("1.5.0")
		r := d.run(installLimit, "", "--resolver", resolverA, "--timeout", "2m")
		d.expect(r, 0, "provisioning succeeded (exit 0)")
		old := d.daemon()
		// A resolver the API refuses: 1.5.0 has removed the old service
		// before it learns that.
		d.cutShort(syscall.SIGKILL, "applying", func() bool { return d.daemon() != old }, "--resolver", resolverBad, "--timeout", "2m")
		d.waitFor(time.Minute, "ctrld start to end", func() bool { return len(ctrldCommands("start")) == 0 })

		r = d.run(installLimit, "", "--timeout", "2m")
		if !strings.Contains(r.stdout, "ctrld-install: plan: the last run was cut short while it changed ctrld") {
			t.Errorf("the next run did not finish the cut-short change")
		}
		if rec := d.record(); rec.Action != "rolled-back" || rec.Rollback != "ok" {
			t.Errorf("record says action=%q rollback=%q, want rolled-back ok", rec.Action, rec.Rollback)
		}
		d.serviceNames(resolverA)
		d.daemonRuns("1.5.0")
		d.answers(settle, true)
	})
}

// An upstream 8 s slow (longer than the 5 s timeout in ctrld.toml) does
// not make a healthy device look broken: ctrld answers ctrld.test. itself
// (ctrld-selfcheck-name.txt), so a re-run of the same policy changes
// nothing and verify passes.
func TestSysVSlowUpstream(t *testing.T) { slowUpstream(t, "1.5.0") }

func TestSysVSlowUpstream149(t *testing.T) { slowUpstream(t, "1.4.9") }

func slowUpstream(t *testing.T, version string) {
	scenario(t, innerSysV, 4*time.Minute, func(d *device) {
		d.putCtrld(version)
		r := d.run(installLimit, "", "--resolver", resolverA, "--timeout", "2m")
		d.expect(r, 0, "provisioning succeeded (exit 0)")
		pid := d.daemon()

		d.fake.SetDoHDelay(8 * time.Second)
		r = d.run(installLimit, "", "--resolver", resolverA, "--timeout", "2m")
		d.expect(r, 0, "already provisioned, nothing to do (exit 0)")
		if now := d.daemon(); now != pid {
			t.Errorf("the re-run replaced the daemon (pid %d, was %d)", now, pid)
		}
		r = d.run(installLimit, "verify", "--timeout", "1m")
		d.expect(r, 0, "verify succeeded (exit 0)")
		d.answers(settle, true)
	})
}

// An upstream that refuses every question (HTTP 503 from DoH): ctrld still
// answers ctrld.test. itself, so the device is healthy as far as ctrld's
// own evidence goes; verify passes and a re-run changes nothing.
func TestSysVRefusingUpstream(t *testing.T) {
	scenario(t, innerSysV, 4*time.Minute, func(d *device) {
		d.putCtrld("1.5.0")
		r := d.run(installLimit, "", "--resolver", resolverA, "--timeout", "2m")
		d.expect(r, 0, "provisioning succeeded (exit 0)")
		pid := d.daemon()

		d.fake.SetDoHRefused(true)
		r = d.run(installLimit, "verify", "--timeout", "1m")
		d.expect(r, 0, "verify succeeded (exit 0)")
		r = d.run(installLimit, "", "--resolver", resolverA, "--timeout", "2m")
		d.expect(r, 0, "already provisioned, nothing to do (exit 0)")
		if now := d.daemon(); now != pid {
			t.Errorf("the re-run replaced the daemon (pid %d, was %d)", now, pid)
		}
		d.answers(settle, true)
	})
}
