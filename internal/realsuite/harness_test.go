//go:build linux

package realsuite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The suite runs the real ctrld releases, which contact Control D's public
// addresses unless they run in a namespace with only loopback. A test
// process therefore plays three parts, told apart by the environment: the
// ordinary test binary (outside, starts each scenario in its namespace and
// checks the host afterwards), PID 1 of a SysV scenario's namespace (an
// init that reaps the daemons ctrld's init script orphans), and the
// scenario itself, inside the namespace.
const (
	envReal     = "CTRLD_INSTALL_REAL"       // the folder of real ctrld releases; unset: the suite skips
	envSystemNS = "CTRLD_INSTALL_SYSTEMD_NS" // systemd-ns.sh, if not beside the releases in ../tools
	envInner    = "CTRLD_REALSUITE_INNER"    // "sysv" or "systemd": this process is the scenario, inside
	envInit     = "CTRLD_REALSUITE_INIT"     // "1": this process is PID 1 of a SysV namespace
	envWork     = "CTRLD_REALSUITE_WORK"     // the scenario's work directory
	envReleases = "CTRLD_REALSUITE_RELEASES" // the releases, copied into the work directory
	envDeadline = "CTRLD_REALSUITE_DEADLINE" // Unix seconds the scenario must end by
	innerSysV   = "sysv"
	innerSysD   = "systemd"
	releaseFmt  = "ctrld-%s-linux-amd64"
	maxOutput   = 4 << 20
)

// suite is what the outer process found and built once.
var suite struct {
	skip      string // why the suite does not run here, if it does not
	releases  string
	systemdNS string // systemd-ns.sh, "" when absent
	dir       string // the suite's temporary directory, every scenario's work directory in it
	installer string // the built ctrld-install
	testBin   string
	before    hostState
}

func TestMain(m *testing.M) {
	switch {
	case os.Getenv(envInit) == "1":
		os.Exit(initMain())
	case os.Getenv(envInner) != "":
		os.Exit(m.Run())
	}
	os.Exit(outerMain(m))
}

func outerMain(m *testing.M) int {
	suite.skip = gate()
	if suite.skip != "" {
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "ctrld-realsuite-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	suite.dir = dir
	suite.installer = filepath.Join(dir, "ctrld-install")
	build := exec.Command("go", "build", "-trimpath", "-o", suite.installer, "github.com/Control-D-Inc/ctrld-install/cmd/ctrld-install")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building ctrld-install:", err)
		return 1
	}
	if suite.testBin, err = os.Executable(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	suite.before = observeHost()
	code := m.Run()
	// Every scenario's namespace is gone by now; anything of theirs still
	// on the host is a leak, whatever the scenarios said.
	leaks := observeHost().leaksSince(suite.before)
	if err := os.RemoveAll(dir); err != nil {
		leaks = append(leaks, "the suite's directory: "+err.Error())
	}
	if len(leaks) > 0 {
		fmt.Fprintln(os.Stderr, "realsuite: left on the host after the suite:")
		for _, l := range leaks {
			fmt.Fprintln(os.Stderr, "  "+l)
		}
		code = 1
	}
	return code
}

// gate says why the suite cannot run here ("" when it can), cheaply: a
// developer's go test ./... must not wait on it.
func gate() string {
	dir := os.Getenv(envReal)
	if dir == "" {
		return envReal + " is not set: set it to the folder of real ctrld releases (../shared/real) to run the real-ctrld suite (root, Linux, namespaces)"
	}
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		return "the real ctrld releases are linux/amd64 builds"
	}
	if os.Geteuid() != 0 {
		return "the real-ctrld suite needs root: ctrld installs a service, in a private namespace"
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err.Error()
	}
	for _, v := range []string{"1.2.1", "1.4.9", "1.5.0"} {
		if _, err := os.Stat(filepath.Join(abs, fmt.Sprintf(releaseFmt, v))); err != nil {
			return fmt.Sprintf("%s=%s holds no ctrld %s: %v", envReal, dir, v, err)
		}
	}
	for _, tool := range []string{"unshare", "nsenter", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "the real-ctrld suite needs " + tool + " (util-linux, iproute2)"
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "unshare", "--net", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc", "true").CombinedOutput(); err != nil {
		return fmt.Sprintf("cannot make private net, mount and pid namespaces (unshare: %v: %s)", err, bytes.TrimSpace(out))
	}
	suite.releases = abs
	ns := os.Getenv(envSystemNS)
	if ns == "" {
		ns = filepath.Join(abs, "..", "tools", "systemd-ns.sh")
	}
	if _, err := os.Stat(ns); err == nil {
		if _, err := os.Stat("/lib/systemd/systemd"); err == nil {
			suite.systemdNS = ns
		}
	}
	return ""
}

// initMain is PID 1 of a SysV scenario's namespace: it runs the scenario
// as its child and reaps every orphan (the daemons ctrld's init script
// starts with "&"), as a device's init does; a daemon left a zombie would
// still look alive to kill -0. Its exit ends the namespace (unshare
// --kill-child), and with it every process left inside.
func initMain() int {
	env := make([]string, 0, len(os.Environ()))
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, envInit+"=") {
			env = append(env, e)
		}
	}
	p, err := os.StartProcess(os.Args[0], os.Args, &os.ProcAttr{Env: env, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "realsuite init:", err)
		return 1
	}
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "realsuite init:", err)
			return 1
		}
		if pid == p.Pid {
			if ws.Signaled() {
				return 128 + int(ws.Signal())
			}
			return ws.ExitStatus()
		}
	}
}

// scenario runs body in a private namespace: the test re-runs itself
// there (under unshare for SysV, under systemd-ns.sh for systemd), and
// body runs in that inner process with the device (d) set up.
func scenario(t *testing.T, manager string, limit time.Duration, body func(d *device)) {
	if inner := os.Getenv(envInner); inner != "" {
		if inner != manager {
			t.Fatalf("scenario for %s started under %s", manager, inner)
		}
		d := setUpInside(t, manager)
		body(d)
		return
	}
	if suite.skip != "" {
		t.Skip(suite.skip)
	}
	if manager == innerSysD && suite.systemdNS == "" {
		t.Skip("systemd scenarios need systemd-ns.sh beside the releases (../tools; or " + envSystemNS + ") and /lib/systemd/systemd (Debian's systemd package)")
	}
	t.Parallel()
	// In the suite's directory, so that anything of it left on the host
	// is found by its path.
	work, err := os.MkdirTemp(suite.dir, t.Name()+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(work) })
	// The work directory is all the namespace sees of the host that it may
	// write (systemd-ns.sh binds it; its /tmp is empty): everything the
	// scenario runs is copied there.
	rel := filepath.Join(work, "releases")
	for _, dir := range []string{rel, filepath.Join(work, "bin"), filepath.Join(work, "tmp"), filepath.Join(work, "suite")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []string{"1.2.1", "1.4.9", "1.5.0"} {
		copyFile(t, filepath.Join(suite.releases, fmt.Sprintf(releaseFmt, v)), filepath.Join(rel, fmt.Sprintf(releaseFmt, v)))
	}
	copyFile(t, suite.installer, filepath.Join(work, "suite", "ctrld-install"))
	testBin := filepath.Join(work, "suite", "realsuite.test")
	copyFile(t, suite.testBin, testBin)

	ctx, cancel := context.WithTimeout(context.Background(), limit+30*time.Second)
	defer cancel()
	args := []string{testBin, "-test.run=^" + t.Name() + "$", "-test.v", "-test.count=1", "-test.timeout=" + (limit + 10*time.Second).String()}
	env := append(os.Environ(), envInner+"="+manager, envWork+"="+work, envReleases+"="+rel,
		envDeadline+"="+strconv.FormatInt(time.Now().Add(limit).Unix(), 10))
	var cmd *exec.Cmd
	if manager == innerSysV {
		cmd = exec.CommandContext(ctx, "unshare", append([]string{"--net", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc"}, args...)...)
		env = append(env, envInit+"=1")
	} else {
		cmd = exec.CommandContext(ctx, "bash", append([]string{suite.systemdNS}, args...)...)
		env = append(env, "SDNS_BIND="+work, "SDNS_TIMEOUT="+strconv.Itoa(int(limit.Seconds())+10),
			"SDNS_JOURNAL="+filepath.Join(work, "journal.txt"))
	}
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout = &limitedWriter{w: &out, n: maxOutput}
	cmd.Stderr = cmd.Stdout
	// unshare passes SIGTERM on; systemd-ns.sh tears its namespace down on it.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 20 * time.Second
	start := time.Now()
	err = cmd.Start()
	if err == nil {
		if manager == innerSysD {
			sdnsMu.Lock()
			sdnsPIDs = append(sdnsPIDs, cmd.Process.Pid)
			sdnsMu.Unlock()
		}
		err = cmd.Wait()
	}
	elapsed := time.Since(start).Round(100 * time.Millisecond)
	for _, line := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
		t.Log("| " + line)
	}
	t.Logf("scenario took %s in its namespace", elapsed)
	if err != nil {
		t.Errorf("scenario failed in its namespace after %s: %v", elapsed, err)
		if b, err := os.ReadFile(filepath.Join(work, "journal.txt")); err == nil && t.Failed() && testing.Verbose() {
			t.Logf("the namespace's journal, last 60 lines:\n%s", lastLines(string(b), 60))
		}
	}
	if strings.Contains(out.String(), "systemd-ns.sh: left behind") {
		t.Errorf("systemd-ns.sh left something on the host")
	}
	if procs := processesUnder(work); len(procs) > 0 {
		t.Errorf("processes of the scenario outlived its namespace: %v", procs)
	}
}

type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n <= 0 {
		return len(p), nil
	}
	q := p
	if len(q) > l.n {
		q = q[:l.n]
	}
	l.n -= len(q)
	_, err := l.w.Write(q)
	return len(p), err
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	tmp := to + ".tmp"
	if err := os.WriteFile(tmp, b, 0o755); err != nil {
		t.Fatal(err)
	}
	// By rename, as a package replaces a binary: a daemon running the old
	// file keeps it, and /proc/PID/exe tells them apart.
	if err := os.Rename(tmp, to); err != nil {
		t.Fatal(err)
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// processesUnder lists the host's processes whose executable or command
// line names dir.
func processesUnder(dir string) []string {
	var found []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if strings.Contains(string(cmdline), dir) || strings.HasPrefix(exe, dir) {
			found = append(found, fmt.Sprintf("%d %s", pid, strings.ReplaceAll(string(cmdline), "\x00", " ")))
		}
	}
	return found
}
