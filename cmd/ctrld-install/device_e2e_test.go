//go:build linux

package main

// The device as it is: the stand-in drives ctrld's captured SysV init
// script, whose daemon runs in the process group of ctrld start, so these
// runs observe a real daemon process, a real service definition and a real
// PID file, as on a Linux machine without systemd.

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

type device struct {
	*world
	d      standin.Device
	script standin.Script
}

func newDevice(t *testing.T, version, form string) *device {
	t.Helper()
	w := newWorld(t)
	dv := &device{world: w, d: standin.Device{
		ServiceFile:   filepath.Join(w.dir, "etc", "init.d", "ctrld"),
		PIDDir:        filepath.Join(w.dir, "var", "run"),
		LogDir:        filepath.Join(w.dir, "var", "log"),
		Home:          w.home,
		Form:          form,
		TokenResolver: canaryResolver,
	}}
	w.serviceFile = dv.d.ServiceFile
	dv.script = standin.Script{Version: version, Device: &dv.d}
	for _, a := range []*standin.Action{&dv.script.Start, &dv.script.Restart, &dv.script.Uninstall} {
		a.Record = w.argvFile
	}
	dv.apply()
	return dv
}

func (dv *device) apply() { require.NoError(dv.t, standin.SetScript(dv.fake, dv.script)) }

func (dv *device) install(args ...string) result {
	dv.t.Helper()
	return dv.run(append([]string{"--retries", "0", "--timeout", "60s"}, args...)...)
}

func (dv *device) verify(args ...string) result {
	dv.t.Helper()
	return dv.run(append([]string{"verify", "--ctrld", dv.fake, "--service-file", dv.serviceFile}, args...)...)
}

// daemonPID is the daemon the init script started, 0 when none runs.
func (dv *device) daemonPID() int {
	b, err := os.ReadFile(filepath.Join(dv.d.PIDDir, "ctrld.pid"))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || !alive(pid) {
		return 0
	}
	return pid
}

// alive: the process exists and is not a zombie. A daemon whose parent
// died is a zombie until init reaps it, and this sandbox's init does not.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z'
}

func (dv *device) killDaemon() {
	dv.t.Helper()
	pid := dv.daemonPID()
	require.NotZero(dv.t, pid, "a daemon runs")
	require.NoError(dv.t, syscall.Kill(pid, syscall.SIGKILL))
	require.Eventually(dv.t, func() bool { return !alive(pid) }, 5*time.Second, 10*time.Millisecond)
}

func (dv *device) cleanup() {
	dv.t.Cleanup(func() {
		if pid := dv.daemonPID(); pid != 0 {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// replaceBinary puts a new ctrld on disk the way a package does: a new
// file renamed over the old one, under the running daemon.
func (dv *device) replaceBinary(version string) {
	dv.t.Helper()
	in, err := os.Open(standinMaster)
	require.NoError(dv.t, err)
	defer in.Close()
	tmp := dv.fake + ".pkg"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	require.NoError(dv.t, err)
	_, err = io.Copy(out, in)
	require.NoError(dv.t, err)
	require.NoError(dv.t, out.Close())
	require.NoError(dv.t, os.Rename(tmp, dv.fake))
	dv.script.Version = version
	dv.apply()
}

// calls are the state-changing ctrld commands the stand-in ran.
func (dv *device) calls() [][]string {
	dv.t.Helper()
	var calls [][]string
	for _, rec := range actions(dv.t, dv.argvFile) {
		calls = append(calls, rec.Argv[1:])
	}
	return calls
}

func (dv *device) assertEnds(r result, line string) {
	dv.t.Helper()
	assert.Equal(dv.t, "ctrld-install: "+line, finalLine(r.stdout), "stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	dv.assertNoCanary(r)
}

// A daemon the init script starts inside ctrld's process group outlives a
// successful ctrld start and ctrld restart; the next run leaves it alone.
func TestDeviceDaemonSurvivesInstallAndUpgrade(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	dv := newDevice(t, "v1.5.0", "")
	dv.cleanup()
	dv.assertEnds(dv.install("--token", canaryToken), "provisioning succeeded (exit 0)")
	first := dv.daemonPID()
	require.NotZero(t, first, "the daemon outlives ctrld start")

	dv.assertEnds(dv.install("--token", canaryToken), "already provisioned, nothing to do (exit 0)")
	assert.Equal(t, first, dv.daemonPID(), "a skip leaves the daemon alone")

	dv.replaceBinary("v1.6.0")
	dv.script.Restart.Stdout = leak // what ctrld prints is never repeated
	dv.apply()
	r := dv.verify("--min-version", "1.6.0")
	assert.Equal(t, 67, r.exit, "a new binary the daemon does not run yet is not compliant:\n%s%s", r.stdout, r.stderr)
	r = dv.install("--token", canaryToken)
	dv.assertEnds(r, "upgrade applied, ctrld restarted (exit 0)")
	assert.Contains(t, r.stdout, "ctrld-install: plan: the ctrld binary on disk is not the one the running daemon was started from\n")
	assert.Contains(t, r.stdout, "ctrld-install: running ctrld restart (ctrld 1.6.0 replaces 1.5.0, time left ")
	m := dv.statusJSON()
	assert.Equal(t, "upgraded", m["action"])
	assert.Equal(t, "1.6.0", m["ctrld_version"])
	assert.Equal(t, "<result>OK</result>\n", dv.status("jamf-ea"))
	second := dv.daemonPID()
	require.NotZero(t, second, "the daemon outlives ctrld restart")
	assert.NotEqual(t, first, second)
	assert.Equal(t, 0, dv.verify("--min-version", "1.6.0").exit)

	// The new binary runs now: nothing more to apply.
	r = dv.install("--token", canaryToken, "--json")
	var js map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &js), r.stdout)
	assert.Equal(t, "skipped", js["action"])
	assert.Equal(t, "1.6.0", js["ctrld_version"])
	assert.Equal(t, [][]string{{"start", "--cd-org", canaryToken}, {"restart"}}, dv.calls(), "one start, one restart, and the restart gets no token")
	dv.assertNoCanary(r)
}

// The time limit still ends the whole group, the daemon with it.
func TestDeviceTimeoutEndsTheGroup(t *testing.T) {
	t.Parallel()
	dv := newDevice(t, "v1.5.0", "")
	dv.cleanup()
	dv.script.Start.Hang = true
	dv.apply()
	r := dv.run("--retries", "0", "--timeout", "2s", "--token", canaryToken)
	assert.Equal(t, 64, r.exit, r.stdout)
	b, err := os.ReadFile(filepath.Join(dv.d.PIDDir, "ctrld.pid"))
	require.NoError(t, err, "the daemon was started")
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	assert.Eventually(t, func() bool { return !alive(pid) }, 5*time.Second, 20*time.Millisecond,
		"the daemon in ctrld's group is gone after a timeout")
}

// ctrld 1.2 has status, restart and uninstall only under `ctrld service`.
func TestDeviceCtrld12(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	dv := newDevice(t, "v1.2.1-0c99d27", standin.FormLegacy)
	dv.cleanup()
	dv.assertEnds(dv.install("--resolver", canaryResolver), "provisioning succeeded (exit 0)")
	require.NotZero(t, dv.daemonPID())
	dv.assertEnds(dv.install("--resolver", canaryResolver), "already provisioned, nothing to do (exit 0)")
	dv.assertEnds(dv.verify(), "verify succeeded (exit 0)")
	dv.killDaemon()
	dv.assertEnds(dv.install(), "repair applied, ctrld restarted (exit 0)")
	dv.assertEnds(dv.uninstall(""), "uninstall succeeded (exit 0)")
	assert.NoFileExists(t, dv.serviceFile)
	assert.Zero(t, dv.daemonPID())
	assert.Equal(t, [][]string{{"start", "--cd", canaryResolver}, {"service", "restart"}, {"service", "uninstall"}}, dv.calls())
}

// A device provisioned before ctrld-install existed: no record. A new
// binary under its daemon is an upgrade; a stopped service is repaired
// without the token.
func TestDeviceWithoutRecord(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	dv := newDevice(t, "v1.5.0", "")
	dv.cleanup()
	pre := runBinary(t, dv.fake, []string{standin.EnvScript + "=" + standin.SidecarPath(dv.fake)}, "", "start", "--cd", canaryResolver)
	require.Equal(t, 0, pre.exit, pre.stdout)
	require.NotZero(t, dv.daemonPID())
	require.NoError(t, os.Remove(dv.argvFile))

	dv.replaceBinary("v1.6.0")
	assert.Equal(t, 67, dv.verify("--min-version", "1.6.0").exit)
	dv.assertEnds(dv.install("--resolver", canaryResolver), "upgrade applied, ctrld restarted (exit 0)")
	assert.Equal(t, 0, dv.verify("--min-version", "1.6.0").exit)

	dv.killDaemon()
	r := dv.verify()
	assert.Equal(t, 55, r.exit, "a stopped service is not healthy")
	r = dv.install()
	dv.assertEnds(r, "repair applied, ctrld restarted (exit 0)")
	assert.Contains(t, r.stdout, "ctrld-install: plan: the service is registered but not running\n")
	assert.NotZero(t, dv.daemonPID())
	for _, call := range dv.calls() {
		for _, a := range call {
			assert.NotContains(t, []string{"--cd", "--cd-org"}, a, "a repair provisions nothing: %q", call)
		}
	}
	assert.Equal(t, "repaired", dv.record().Action)
}

// A change to the resolver, the token or the extra flags provisions again
// and says what changed; the same request is skipped.
func TestDeviceChangesApply(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	dv := newDevice(t, "v1.5.0", "")
	dv.cleanup()
	dv.assertEnds(dv.install("--token", canaryToken, "--", "--intercept-mode=dns"), "provisioning succeeded (exit 0)")
	dv.assertEnds(dv.install("--token", canaryToken, "--", "--intercept-mode=dns"), "already provisioned, nothing to do (exit 0)")
	for _, tc := range []struct {
		args []string
		what string
	}{
		{[]string{"--token", canaryLower, "--", "--intercept-mode=dns"}, "token"},
		{[]string{"--token", canaryLower, "--", "--intercept-mode=off"}, "extra flags"},
		{[]string{"--resolver", canaryResolver + "X", "--", "--intercept-mode=off"}, "resolver"},
	} {
		r := dv.install(tc.args...)
		dv.assertEnds(r, "provisioning succeeded (exit 0)")
		assert.Contains(t, r.stdout, "ctrld-install: plan: configuration changed: "+tc.what+"\n")
		assert.NotContains(t, r.stdout+r.stderr, canaryLower)
		dv.assertEnds(dv.install(tc.args...), "already provisioned, nothing to do (exit 0)")
	}
	for _, name := range []string{".ctrld-install.fingerprint", "ctrld-install-result.json"} {
		b, _ := os.ReadFile(filepath.Join(dv.home, name))
		for _, canary := range []string{canaryToken, canaryLower, canaryResolver} {
			assert.NotContains(t, string(b), canary, name)
		}
	}
}

// ctrld 1.2.1 keeps running a default configuration after the API refused
// the device (ctrld-1.2.1-devinvalid.txt): the run failed, and the next run
// provisions again although the service looks healthy.
func TestDeviceFailedProvisioningIsNotSkipped(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	dv := newDevice(t, "v1.2.1-0c99d27", standin.FormLegacy)
	dv.cleanup()
	dv.script.Starts = []standin.Action{{
		Record: dv.argvFile,
		Stdout: []string{"\x1b[90mDec  1 19:20:01.000\x1b[0m \x1b[33mWRN\x1b[0m could not fetch resolver config error=\"Device does not exist\" mode=cd",
			"\x1b[90mDec  1 19:20:31.000\x1b[0m \x1b[31mERR\x1b[0m Service did not start, please check system/service log for details error"},
		Exit: 1,
	}, {Record: dv.argvFile}}
	dv.apply()
	r := dv.install("--resolver", canaryResolver)
	assert.NotEqual(t, 0, r.exit)
	require.NotZero(t, dv.daemonPID(), "1.2.1 leaves its daemon running")
	// The API refused the device for good: the same request waits out its
	// pause (15 minutes), which the test ends.
	require.NoError(t, os.Remove(filepath.Join(dv.home, ".ctrld-install.pause.json")))
	r = dv.install("--resolver", canaryResolver)
	dv.assertEnds(r, "provisioning succeeded (exit 0)")
	assert.Contains(t, r.stdout, "ctrld-install: plan: the last provisioning failed\n")
	dv.assertEnds(dv.install("--resolver", canaryResolver), "already provisioned, nothing to do (exit 0)")
}

// --dry-run plans and changes nothing: no state-changing ctrld command, the
// record byte for byte as it was.
func TestDeviceDryRun(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	dv := newDevice(t, "v1.5.0", "")
	dv.cleanup()
	dv.assertEnds(dv.install("--token", canaryToken), "provisioning succeeded (exit 0)")
	dv.killDaemon()
	before, err := os.ReadFile(filepath.Join(dv.home, "ctrld-install-result.json"))
	require.NoError(t, err)
	calls := dv.calls()

	r := dv.install("--dry-run")
	dv.assertEnds(r, "dry run: would repair (exit 0)")
	assert.Contains(t, r.stdout, "ctrld-install: plan: the service is registered but not running\n")
	r = dv.install("--dry-run", "--json", "--token", canaryToken)
	var j map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &j), r.stdout)
	assert.Equal(t, true, j["dry_run"])
	assert.Equal(t, "repaired", j["action"])
	r = dv.install("--dry-run", "--token", canaryLower)
	dv.assertEnds(r, "dry run: would provision (exit 0)")
	assert.Contains(t, r.stdout, "ctrld-install: plan: configuration changed: token\n")

	after, err := os.ReadFile(filepath.Join(dv.home, "ctrld-install-result.json"))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the record is untouched")
	assert.Equal(t, calls, dv.calls(), "no ctrld command that changes anything ran")
	assert.Zero(t, dv.daemonPID(), "nothing was started")
}
