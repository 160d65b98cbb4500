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
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/dnscheck"
	"github.com/Control-D-Inc/ctrld-install/internal/listener"
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
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	if label != "" {
		r.ctrld, err = standin.LinkBuild(bin, master, s, label)
	} else {
		r.ctrld, err = standin.Link(bin, master, s)
	}
	if err != nil {
		t.Fatalf("linking the stand-in: %v", err)
	}
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
	} else if err != nil {
		t.Fatalf("ctrld %s: %v", strings.Join(args, " "), err)
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
	return dnscheck.Ask(ctx, addr) != dnscheck.NoAnswer
}

// freeAddr is a loopback UDP address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	addr := pc.LocalAddr().String()
	if err := pc.Close(); err != nil {
		t.Fatalf("close %s: %v", addr, err)
	}
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

// wantLines fails the test unless got, the output's lines, are want.
func wantLines(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("output lines:\n got %q\nwant %q", got, want)
	}
}

// eventually reports whether cond holds within d, asking every tick. A
// true that comes only after d is too late.
func eventually(cond func() bool, d, tick time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		ok := cond()
		if time.Now().After(deadline) {
			return false
		}
		if ok {
			return true
		}
		time.Sleep(tick)
	}
}

func TestStartServesListener(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	r := newRig(t, standin.Device{Listener: addr}, nil, "")
	out, code := r.run(t, "start", "--cd", "RESOLVER")
	if code != 0 {
		t.Fatalf("start: exit %d, want 0\n%s", code, out)
	}
	config := filepath.Join(r.dev.Home, "ctrld.toml")
	wantLines(t, lines(out), []string{
		"NTC Starting service",
		"NTC Generating controld config: " + config,
		"NTC Service started",
	})
	b, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	got, state := listener.Addr(b)
	if state != listener.Found {
		t.Errorf("no listener in %s:\n%s", config, b)
	}
	if got != addr {
		t.Errorf("listener %q in the config, want %q", got, addr)
	}
	if want := "https://doh.canary.controld.com/RESOLVER"; !strings.Contains(string(b), want) {
		t.Errorf("config does not contain %q:\n%s", want, b)
	}
	if !answers(addr) {
		t.Errorf("the daemon answers on the listener: %s is silent", addr)
	}
	if svc, want := readFile(t, r.dev.ServiceFile), `"--config=`+config+`"`; !strings.Contains(svc, want) {
		t.Errorf("service file does not contain %s:\n%s", want, svc)
	}

	// Over the healthy service: the config is read, nothing is said of
	// the running service's removal (restore-kept-resolver).
	out, code = r.run(t, "start", "--cd", "RESOLVER")
	if code != 0 {
		t.Fatalf("start again: exit %d, want 0\n%s", code, out)
	}
	wantLines(t, lines(out), []string{
		"NTC Reading config: " + config,
		"NTC Starting service",
		"NTC Generating controld config: " + config,
		"NTC Service started",
	})
	if !answers(addr) {
		t.Errorf("started again, %s is silent, want an answer", addr)
	}

	out, code = r.run(t, "status")
	if code != 0 {
		t.Errorf("status: exit %d, want 0\n%s", code, out)
	}
	out, code = r.run(t, "uninstall")
	if code != 0 {
		t.Errorf("uninstall: exit %d, want 0\n%s", code, out)
	}
	if answers(addr) {
		t.Errorf("uninstalled, the listener is silent: %s answers", addr)
	}
}

func TestStartKeepsConfigGiven(t *testing.T) {
	t.Parallel()
	addr, other := freeAddr(t), freeAddr(t)
	r := newRig(t, standin.Device{Listener: other}, nil, "")
	config := filepath.Join(r.dir, "mine.toml")
	ip, port, _ := net.SplitHostPort(addr)
	if err := os.WriteFile(config, []byte("[listener]\n  [listener.0]\n    ip = \""+ip+"\"\n    port = "+port+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := r.run(t, "start", "--cd=RESOLVER", "--config="+config)
	if code != 0 {
		t.Fatalf("start: exit %d, want 0\n%s", code, out)
	}
	if strings.Contains(out, "Generating controld config") {
		t.Errorf("a file given with --config that exists is kept: the output says it was generated\n%s", out)
	}
	if !answers(addr) {
		t.Errorf("the daemon serves the listener of its --config: %s is silent", addr)
	}
	if answers(other) {
		t.Errorf("the device's own listener %s answers, want it silent", other)
	}
}

func TestStartRefusedResolver(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	r := newRig(t, standin.Device{Listener: addr, Resolvers: []string{"KNOWN"}, TokenResolver: "KNOWN"}, nil, "")
	out, code := r.run(t, "start", "--cd-org", "TOKEN")
	if code != 0 {
		t.Fatalf("start --cd-org: exit %d, want 0\n%s", code, out)
	}
	if !answers(addr) {
		t.Fatalf("started, %s is silent, want an answer", addr)
	}

	out, code = r.run(t, "start", "--cd", "UNKNOWN")
	if code != 1 {
		t.Errorf("start --cd UNKNOWN: exit %d, want 1\n%s", code, out)
	}
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
	wantLines(t, got, want)
	// The capture's "after": no daemon, no init script, the listener
	// silent, status exit 1.
	if r.installed() {
		t.Errorf("the init script %s remains, want it removed", r.dev.ServiceFile)
	}
	if r.daemonAlive() {
		t.Errorf("the daemon runs, want it stopped")
	}
	if answers(addr) {
		t.Errorf("%s answers, want it silent", addr)
	}
	_, code = r.run(t, "status")
	if code != 1 {
		t.Errorf("status: exit %d, want 1", code)
	}

	// ctrld-1.5.0-restore-kept-resolver.txt: the earlier resolver again.
	out, code = r.run(t, "start", "--cd", "KNOWN")
	if code != 0 {
		t.Errorf("start --cd KNOWN: exit %d, want 0\n%s", code, out)
	}
	if !answers(addr) {
		t.Errorf("restored, %s is silent, want an answer", addr)
	}
}

func TestStartListenUnavailable(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	r := newRig(t, standin.Device{Listener: addr}, nil, "")
	out, code := r.run(t, "start", "--cd", "RESOLVER")
	if code != 0 {
		t.Fatalf("start: exit %d, want 0\n%s", code, out)
	}

	out, code = r.run(t, "start", "--cd", "RESOLVER", "--listen", "192.0.2.53:53")
	if code != 1 {
		t.Errorf("start --listen 192.0.2.53:53: exit %d, want 1\n%s", code, out)
	}
	// ctrld-1.5.0-change-listen-unavailable.txt.
	wantLines(t, lines(out), []string{
		"NTC Starting service",
		"NTC Generating controld config: ctrld.toml",
		"ERR ctrld service may not have started due to an error or misconfiguration, service log:",
		"??? ================================",
		`??? <no log output is obtained from ctrld process>"`,
		"??? ================================",
		"NTC Service uninstalled",
	})
	if r.installed() {
		t.Errorf("the init script %s remains, want it removed", r.dev.ServiceFile)
	}
	if r.daemonAlive() {
		t.Errorf("the daemon runs, want it stopped")
	}
	if answers(addr) {
		t.Errorf("%s answers, want it silent", addr)
	}
	if log, want := readFile(t, filepath.Join(r.dev.LogDir, "ctrld.err")), `"listen" and "primary_upstream" flags must be set in no config mode`; !strings.Contains(log, want) {
		t.Errorf("ctrld.err does not contain %q:\n%s", want, log)
	}
	_, code = r.run(t, "status")
	if code != 1 {
		t.Errorf("status: exit %d, want 1", code)
	}
}

func TestStartListenFlagServes(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	r := newRig(t, standin.Device{}, nil, "")
	out, code := r.run(t, "start", "--cd", "RESOLVER", "--listen="+addr)
	if code != 0 {
		t.Fatalf("start: exit %d, want 0\n%s", code, out)
	}
	if strings.Contains(out, "Generating controld config") {
		t.Errorf("no Listener, no config written: the output says one was generated\n%s", out)
	}
	if !answers(addr) {
		t.Errorf("the daemon serves --listen=%s: it is silent", addr)
	}
}

func TestStartSilentDaemon(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	r := newRig(t, standin.Device{Listener: addr, Silent: true}, nil, "")
	start := time.Now()
	out, code := r.run(t, "start", "--cd", "RESOLVER")
	if code != 1 {
		t.Errorf("start: exit %d, want 1\n%s", code, out)
	}
	if took := time.Since(start); took < 2*time.Second {
		t.Errorf("the self-check waits its full time for a daemon that runs: start took %v, want at least 2s", took)
	}
	for _, want := range []string{
		"ctrld service may not have started",
		"<no log output is obtained from ctrld process>",
		"NTC Service uninstalled",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not contain %q:\n%s", want, out)
		}
	}
	if r.installed() {
		t.Errorf("the init script %s remains, want it removed", r.dev.ServiceFile)
	}
	if r.daemonAlive() {
		t.Errorf("the silent daemon was stopped: it still runs")
	}
}

func TestStartAnswerDelay(t *testing.T) {
	t.Parallel()
	addr := freeAddr(t)
	r := newRig(t, standin.Device{Listener: addr, AnswerDelayMS: 600}, nil, "")
	start := time.Now()
	out, code := r.run(t, "start", "--cd", "RESOLVER")
	if code != 0 {
		t.Errorf("start: exit %d, want 0\n%s", code, out)
	}
	if took := time.Since(start); took < 600*time.Millisecond {
		t.Errorf("start took %v, want at least the daemon's 600ms delay", took)
	}
	if want := "NTC Service started"; !strings.Contains(out, want) {
		t.Errorf("output does not contain %q:\n%s", want, out)
	}

	// Restart returns without waiting for the new daemon to answer; it
	// answers a moment later. (Whether it has answered yet when restart
	// returns depends on the machine's load, so that is not asserted.)
	out, code = r.run(t, "restart")
	if code != 0 {
		t.Errorf("restart: exit %d, want 0\n%s", code, out)
	}
	wantLines(t, lines(out), []string{"NTC Service restarted"})
	if !eventually(func() bool { return answers(addr) }, 10*time.Second, 100*time.Millisecond) {
		t.Errorf("a moment later: %s still silent after 10s, want an answer", addr)
	}
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
	if code != 0 {
		t.Errorf("--version: exit %d, want 0", code)
	}
	if want := "ctrld version v1.5.0\n"; out != want {
		t.Errorf("a build without a Version is the script's: --version printed %q, want %q", out, want)
	}
	out, code = r.run(t, "start", "--cd", "RESOLVER")
	if code != 0 {
		t.Fatalf("start: exit %d, want 0\n%s", code, out)
	}
	if !answers(addr) {
		t.Fatalf("started, %s is silent, want an answer", addr)
	}

	// ctrld-1.5.0-restart-dying-build.txt: a new build by rename.
	if err := standin.ReplaceBuild(r.ctrld, master, "dying"); err != nil {
		t.Fatalf("ReplaceBuild dying: %v", err)
	}
	out, code = r.run(t, "--version")
	if code != 0 {
		t.Errorf("--version: exit %d, want 0", code)
	}
	if want := "ctrld version v1.6.0\n"; out != want {
		t.Errorf("--version printed %q, want %q", out, want)
	}
	if !answers(addr) {
		t.Errorf("the old daemon runs its old bytes: %s is silent", addr)
	}
	out, code = r.run(t, "restart")
	if code != 0 {
		t.Errorf("exit 0, as the capture: restart exit %d", code)
	}
	wantLines(t, lines(out), []string{"ERR error running task Start: exit status 1", "ERR Service restart failed"})
	// The capture's "after": the init script stays, no daemon, the
	// listener silent, status exit 2.
	if !r.installed() {
		t.Errorf("the init script %s is gone, want it kept", r.dev.ServiceFile)
	}
	if r.daemonAlive() {
		t.Errorf("the daemon runs, want it dead")
	}
	if answers(addr) {
		t.Errorf("%s answers, want it silent", addr)
	}
	out, code = r.run(t, "status")
	if code != 2 {
		t.Errorf("status: exit %d, want 2\n%s", code, out)
	}

	// ctrld-1.5.0-restart-kept-build.txt: the kept build renamed back.
	if err := standin.ReplaceBuild(r.ctrld, master, "kept"); err != nil {
		t.Fatalf("ReplaceBuild kept: %v", err)
	}
	out, code = r.run(t, "restart")
	if code != 0 {
		t.Errorf("restart: exit %d, want 0", code)
	}
	wantLines(t, lines(out), []string{"NTC Service restarted"})
	if !answers(addr) {
		t.Errorf("restarted, %s is silent, want an answer", addr)
	}
	out, code = r.run(t, "status")
	if code != 0 {
		t.Errorf("status: exit %d, want 0\n%s", code, out)
	}

	// A label the script does not know is the script's ctrld.
	if err := standin.ReplaceBuild(r.ctrld, master, "unknown"); err != nil {
		t.Fatalf("ReplaceBuild unknown: %v", err)
	}
	out, _ = r.run(t, "--version")
	if want := "ctrld version v1.5.0\n"; out != want {
		t.Errorf("--version printed %q, want %q", out, want)
	}
	if err := standin.ReplaceBuild(r.ctrld, master, "v151rc"); err != nil {
		t.Fatalf("ReplaceBuild v151rc: %v", err)
	}
	out, _ = r.run(t, "--version")
	if want := "ctrld version v1.5.1-rc\n"; out != want {
		t.Errorf("--version printed %q, want %q", out, want)
	}
}

func TestNoListenerUnchanged(t *testing.T) {
	t.Parallel()
	// Without a Listener the device behaves as it did before: the init
	// script's output shows, the daemon binds nothing.
	r := newRig(t, standin.Device{}, nil, "")
	out, code := r.run(t, "start", "--cd", "RESOLVER")
	if code != 0 {
		t.Fatalf("start: exit %d, want 0\n%s", code, out)
	}
	if want := "Starting ctrld"; !strings.Contains(out, want) {
		t.Errorf("output does not contain %q:\n%s", want, out)
	}
	if strings.Contains(out, "Generating controld config") {
		t.Errorf("no Listener, yet the output says a config was generated:\n%s", out)
	}
	out, code = r.run(t, "restart")
	if code != 0 {
		t.Errorf("restart: exit %d, want 0\n%s", code, out)
	}
	if want := "NTC Service restarted"; !strings.Contains(out, want) {
		t.Errorf("output does not contain %q:\n%s", want, out)
	}
	if !r.daemonAlive() {
		t.Errorf("restarted, no daemon runs, want one")
	}
}

func TestRefusedResolverWithoutListener(t *testing.T) {
	t.Parallel()
	// The daemon's refusal does not need the self-check: start (without
	// a Listener, no check) returns, and the daemon is gone with the
	// service it removed.
	r := newRig(t, standin.Device{Resolvers: []string{"KNOWN"}}, nil, "")
	out, code := r.run(t, "start", "--cd", "UNKNOWN")
	if code != 0 {
		t.Fatalf("start: exit %d, want 0\n%s", code, out)
	}
	if !eventually(func() bool { return !r.daemonAlive() && !r.installed() }, 5*time.Second, 20*time.Millisecond) {
		t.Fatalf("after 5s: daemon alive %v, init script present %v; want neither", r.daemonAlive(), r.installed())
	}
	if log, want := readFile(t, filepath.Join(r.dev.LogDir, "ctrld.log")), `FTL failed to fetch resolver config error="Device does not exist" mode=cd`; !strings.Contains(log, want) {
		t.Errorf("ctrld.log does not contain %q:\n%s", want, log)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
