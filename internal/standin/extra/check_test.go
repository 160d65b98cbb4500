//go:build unix

package extra_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/dnscheck"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
	"github.com/Control-D-Inc/ctrld-install/internal/standin/extra"
	"github.com/Control-D-Inc/ctrld-install/internal/testflags"
)

// master is this test binary copied before any test runs, so that no
// executable is written while a test forks; every test links or copies it.
var master string

func TestMain(m *testing.M) {
	if standin.IsFake() {
		os.Exit(standin.Main())
	}
	dir, err := os.MkdirTemp("", "standin-extra-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	master, err = standin.Install(dir, standin.Script{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Each test waits on a device's daemons and time limits.
	testflags.MoreParallel(8)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// rig is one device: its paths in a temporary directory, the stand-in at
// ctrld, the daemon stopped when the test ends.
type rig struct {
	dir, ctrld string
	dev        *standin.Device
}

func newRig(t *testing.T, dev standin.Device, builds map[string]standin.Build, label string) *rig {
	t.Helper()
	dir := t.TempDir()
	dev.ServiceFile = filepath.Join(dir, "etc", "init.d", "ctrld")
	dev.PIDDir = filepath.Join(dir, "run")
	dev.LogDir = filepath.Join(dir, "log")
	dev.Home = filepath.Join(dir, "controld")
	r := &rig{dir: dir, dev: &dev}
	s := standin.Script{Version: "v1.5.0", Device: r.dev, Builds: builds}
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.Mkdir(bin, 0o755))
	var err error
	if label != "" {
		r.ctrld, err = standin.LinkBuild(bin, master, s, label)
	} else {
		r.ctrld, err = standin.Link(bin, master, s)
	}
	require.NoError(t, err)
	t.Cleanup(func() {
		if pid, ok := extra.Alive(r.pidFile()); ok {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return r
}

func (r *rig) pidFile() string { return filepath.Join(r.dev.PIDDir, "ctrld.pid") }

// run runs the stand-in and returns its output, ANSI stripped, and status.
func (r *rig) run(t *testing.T, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, r.ctrld, args...).CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return ansi.ReplaceAllString(string(out), ""), code
}

func (r *rig) installed() bool {
	_, err := os.Stat(r.dev.ServiceFile)
	return err == nil
}

func (r *rig) daemonAlive() bool {
	_, ok := extra.Alive(r.pidFile())
	return ok
}

func answers(addr string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	return dnscheck.Answers(ctx, addr)
}

// freeAddr is a loopback UDP address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := pc.LocalAddr().String()
	require.NoError(t, pc.Close())
	return addr
}

// lines are the output's lines less their time stamps.
func lines(out string) []string {
	stamp := regexp.MustCompile(`^[A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d\.\d{3} `)
	var ls []string
	for l := range strings.SplitSeq(strings.TrimRight(out, "\n"), "\n") {
		ls = append(ls, stamp.ReplaceAllString(l, ""))
	}
	return ls
}

func TestStartServesListener(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	r := newRig(t, standin.Device{Listener: addr}, nil, "")
	out, code := r.run(t, "start", "--cd", "RESOLVER")
	require.Equal(t, 0, code, out)
	config := filepath.Join(r.dev.Home, "ctrld.toml")
	assert.Equal(t, []string{
		"NTC Starting service",
		"NTC Generating controld config: " + config,
		"NTC Service started",
	}, lines(out))
	b, err := os.ReadFile(config)
	require.NoError(t, err)
	got, ok := parse.ListenerAddr(b)
	assert.True(t, ok)
	assert.Equal(t, addr, got)
	assert.Contains(t, string(b), "https://doh.canary.controld.com/RESOLVER")
	assert.True(t, answers(addr), "the daemon answers on the listener")
	assert.Contains(t, readFile(t, r.dev.ServiceFile), `"--config=`+config+`"`)

	// Over the healthy service: the config is read, nothing is said of
	// the running service's removal (restore-kept-resolver).
	out, code = r.run(t, "start", "--cd", "RESOLVER")
	require.Equal(t, 0, code, out)
	assert.Equal(t, []string{
		"NTC Reading config: " + config,
		"NTC Starting service",
		"NTC Generating controld config: " + config,
		"NTC Service started",
	}, lines(out))
	assert.True(t, answers(addr))

	out, code = r.run(t, "status")
	assert.Equal(t, 0, code, out)
	out, code = r.run(t, "uninstall")
	assert.Equal(t, 0, code, out)
	assert.False(t, answers(addr), "uninstalled, the listener is silent")
}

func TestStartKeepsConfigGiven(t *testing.T) {
	t.Parallel()
	addr, other := freeAddr(t), freeAddr(t)
	r := newRig(t, standin.Device{Listener: other}, nil, "")
	config := filepath.Join(r.dir, "mine.toml")
	ip, port, _ := net.SplitHostPort(addr)
	require.NoError(t, os.WriteFile(config, []byte("[listener]\n  [listener.0]\n    ip = \""+ip+"\"\n    port = "+port+"\n"), 0o644))
	out, code := r.run(t, "start", "--cd=RESOLVER", "--config="+config)
	require.Equal(t, 0, code, out)
	assert.NotContains(t, out, "Generating controld config", "a file given with --config that exists is kept")
	assert.True(t, answers(addr), "the daemon serves the listener of its --config")
	assert.False(t, answers(other))
}

func TestStartRefusedResolver(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	r := newRig(t, standin.Device{Listener: addr, Resolvers: []string{"KNOWN"}, TokenResolver: "KNOWN"}, nil, "")
	out, code := r.run(t, "start", "--cd-org", "TOKEN")
	require.Equal(t, 0, code, out)
	require.True(t, answers(addr))

	out, code = r.run(t, "start", "--cd", "UNKNOWN")
	assert.Equal(t, 1, code, out)
	config := filepath.Join(r.dev.Home, "ctrld.toml")
	// ctrld-1.5.0-change-bad-resolver.txt, less its time stamps.
	want := []string{
		"NTC Reading config: " + config,
		"NTC Starting service",
		"NTC Generating controld config: " + config,
		`WRN could not get service status error="the service is not installed"`,
		"ERR ctrld service may not have started due to an error or misconfiguration, service log:",
		"??? ================================",
		"??? NTC internal logging enabled",
		"??? ERR no answer from OS resolver",
		`??? WRN could not fetch resolver config error="Device does not exist" mode=cd`,
		"???",
		`??? FTL failed to fetch resolver config error="Device does not exist" mode=cd`,
		"??? ================================",
		"??? An error occurred while performing test query: the service is not installed",
		"??? ================================",
		"ERR the service is not installed",
	}
	got := lines(out)
	for i, l := range got {
		got[i] = regexp.MustCompile(`^\?\?\? [A-Z][a-z]{2} [ 0-9]\d \d\d:\d\d:\d\d\.\d{3} `).ReplaceAllString(l, "??? ")
	}
	assert.Equal(t, want, got)
	// The capture's "after": no daemon, no init script, the listener
	// silent, status exit 1.
	assert.False(t, r.installed())
	assert.False(t, r.daemonAlive())
	assert.False(t, answers(addr))
	_, code = r.run(t, "status")
	assert.Equal(t, 1, code)

	// ctrld-1.5.0-restore-kept-resolver.txt: the earlier resolver again.
	out, code = r.run(t, "start", "--cd", "KNOWN")
	assert.Equal(t, 0, code, out)
	assert.True(t, answers(addr))
}

func TestStartListenUnavailable(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	r := newRig(t, standin.Device{Listener: addr}, nil, "")
	out, code := r.run(t, "start", "--cd", "RESOLVER")
	require.Equal(t, 0, code, out)

	out, code = r.run(t, "start", "--cd", "RESOLVER", "--listen", "192.0.2.53:53")
	assert.Equal(t, 1, code, out)
	// ctrld-1.5.0-change-listen-unavailable.txt.
	assert.Equal(t, []string{
		"NTC Starting service",
		"NTC Generating controld config: ctrld.toml",
		"ERR ctrld service may not have started due to an error or misconfiguration, service log:",
		"??? ================================",
		`??? <no log output is obtained from ctrld process>"`,
		"??? ================================",
		"NTC Service uninstalled",
	}, lines(out))
	assert.False(t, r.installed())
	assert.False(t, r.daemonAlive())
	assert.False(t, answers(addr))
	assert.Contains(t, readFile(t, filepath.Join(r.dev.LogDir, "ctrld.err")), `"listen" and "primary_upstream" flags must be set in no config mode`)
	_, code = r.run(t, "status")
	assert.Equal(t, 1, code)
}

func TestStartListenFlagServes(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	r := newRig(t, standin.Device{}, nil, "")
	out, code := r.run(t, "start", "--cd", "RESOLVER", "--listen="+addr)
	require.Equal(t, 0, code, out)
	assert.NotContains(t, out, "Generating controld config", "no Listener, no config written")
	assert.True(t, answers(addr))
}

func TestStartSilentDaemon(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	r := newRig(t, standin.Device{Listener: addr, Silent: true}, nil, "")
	start := time.Now()
	out, code := r.run(t, "start", "--cd", "RESOLVER")
	assert.Equal(t, 1, code, out)
	assert.GreaterOrEqual(t, time.Since(start), 2*time.Second, "the self-check waits its full time for a daemon that runs")
	assert.Contains(t, out, "ctrld service may not have started")
	assert.Contains(t, out, "<no log output is obtained from ctrld process>")
	assert.Contains(t, out, "NTC Service uninstalled")
	assert.False(t, r.installed())
	assert.False(t, r.daemonAlive(), "the silent daemon was stopped")
}

func TestStartAnswerDelay(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	r := newRig(t, standin.Device{Listener: addr, AnswerDelayMS: 600}, nil, "")
	start := time.Now()
	out, code := r.run(t, "start", "--cd", "RESOLVER")
	assert.Equal(t, 0, code, out)
	assert.GreaterOrEqual(t, time.Since(start), 600*time.Millisecond)
	assert.Contains(t, out, "NTC Service started")

	// Restart returns without waiting for the new daemon to answer; it
	// answers a moment later. (Whether it has answered yet when restart
	// returns depends on the machine's load, so that is not asserted.)
	out, code = r.run(t, "restart")
	assert.Equal(t, 0, code, out)
	assert.Equal(t, []string{"NTC Service restarted"}, lines(out))
	assert.Eventually(t, func() bool { return answers(addr) }, 10*time.Second, 100*time.Millisecond, "a moment later")
}

func TestRestartDyingBuild(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	builds := map[string]standin.Build{
		"kept":   {},
		"dying":  {Version: "v1.6.0", RunExit: 2},
		"v151rc": {Version: "v1.5.1-rc"},
	}
	r := newRig(t, standin.Device{Listener: addr}, builds, "kept")
	out, code := r.run(t, "--version")
	assert.Equal(t, 0, code)
	assert.Equal(t, "ctrld version v1.5.0\n", out, "a build without a Version is the script's")
	out, code = r.run(t, "start", "--cd", "RESOLVER")
	require.Equal(t, 0, code, out)
	require.True(t, answers(addr))

	// ctrld-1.5.0-restart-dying-build.txt: a new build by rename.
	require.NoError(t, standin.ReplaceBuild(r.ctrld, master, "dying"))
	out, code = r.run(t, "--version")
	assert.Equal(t, 0, code)
	assert.Equal(t, "ctrld version v1.6.0\n", out)
	assert.True(t, answers(addr), "the old daemon runs its old bytes")
	out, code = r.run(t, "restart")
	assert.Equal(t, 0, code, "exit 0, as the capture")
	assert.Equal(t, []string{"ERR error running task Start: exit status 1", "ERR Service restart failed"}, lines(out))
	// The capture's "after": the init script stays, no daemon, the
	// listener silent, status exit 2.
	assert.True(t, r.installed())
	assert.False(t, r.daemonAlive())
	assert.False(t, answers(addr))
	out, code = r.run(t, "status")
	assert.Equal(t, 2, code, out)

	// ctrld-1.5.0-restart-kept-build.txt: the kept build renamed back.
	require.NoError(t, standin.ReplaceBuild(r.ctrld, master, "kept"))
	out, code = r.run(t, "restart")
	assert.Equal(t, 0, code)
	assert.Equal(t, []string{"NTC Service restarted"}, lines(out))
	assert.True(t, answers(addr))
	out, code = r.run(t, "status")
	assert.Equal(t, 0, code, out)

	// A label the script does not know is the script's ctrld.
	require.NoError(t, standin.ReplaceBuild(r.ctrld, master, "unknown"))
	out, _ = r.run(t, "--version")
	assert.Equal(t, "ctrld version v1.5.0\n", out)
	require.NoError(t, standin.ReplaceBuild(r.ctrld, master, "v151rc"))
	out, _ = r.run(t, "--version")
	assert.Equal(t, "ctrld version v1.5.1-rc\n", out)
}

func TestNoListenerUnchanged(t *testing.T) {
	t.Parallel()
	// Without a Listener the device behaves as it did before: the init
	// script's output shows, the daemon binds nothing.
	r := newRig(t, standin.Device{}, nil, "")
	out, code := r.run(t, "start", "--cd", "RESOLVER")
	require.Equal(t, 0, code, out)
	assert.Contains(t, out, "Starting ctrld")
	assert.NotContains(t, out, "Generating controld config")
	out, code = r.run(t, "restart")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "NTC Service restarted")
	assert.True(t, r.daemonAlive())
}

func TestRefusedResolverWithoutListener(t *testing.T) {
	t.Parallel()
	// The daemon's refusal does not need the self-check: start (without
	// a Listener, no check) returns, and the daemon is gone with the
	// service it removed.
	r := newRig(t, standin.Device{Resolvers: []string{"KNOWN"}}, nil, "")
	out, code := r.run(t, "start", "--cd", "UNKNOWN")
	require.Equal(t, 0, code, out)
	require.Eventually(t, func() bool { return !r.daemonAlive() && !r.installed() }, 5*time.Second, 20*time.Millisecond)
	assert.Contains(t, readFile(t, filepath.Join(r.dev.LogDir, "ctrld.log")), `FTL failed to fetch resolver config error="Device does not exist" mode=cd`)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}
