//go:build windows

package main

// The Windows build end to end, under Wine in CI: ctrld-install.exe
// against a stand-in ctrld that registers a real service with the service
// control manager, as ctrld does. The executables are built on the host
// (the Windows side has no Go toolchain) and named by windowsE2EEnv;
// .ci/run sets it.

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc"
	"golang.org/x/sys/windows/svc/mgr"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// windowsE2EEnv names a directory holding ctrld-install.exe and
// fakectrld.exe built for Windows.
const windowsE2EEnv = "CTRLD_INSTALL_WINDOWS_E2E"

const (
	winCanaryToken = "CANARYTOKEN0123456789abcdef"
	serviceName    = "ctrld"
)

func TestMain(m *testing.M) { os.Exit(m.Run()) }

// winRig is one test's world: the binaries, a stand-in in its own
// directory, a home, a token file.
type winRig struct {
	t         *testing.T
	installer string
	ctrld     string
	home      string
	token     string
	events    string // the stand-in's Record file
}

func newWinRig(t *testing.T, script func(events string) standin.Script) *winRig {
	t.Helper()
	dir := os.Getenv(windowsE2EEnv)
	if dir == "" {
		t.Skipf("%s names the directory of ctrld-install.exe and fakectrld.exe built for Windows; .ci/run sets it", windowsE2EEnv)
	}
	// The test registers and removes the service ctrld: on a real machine
	// that would be a real ctrld's. Under Wine the prefix is the run's own.
	if !wine.Detected() {
		t.Skip("registers the service ctrld: run only under Wine, in a prefix made for the test run")
	}
	removeService(t) // left by an earlier, killed run
	t.Cleanup(func() { removeService(t) })
	work := wine.TempDir(t)
	r := &winRig{t: t, installer: filepath.Join(dir, "ctrld-install.exe"),
		home: filepath.Join(work, "home"), token: filepath.Join(work, "token"),
		events: filepath.Join(work, "events.jsonl")}
	bin := filepath.Join(work, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	r.ctrld, err = standin.Link(bin, filepath.Join(dir, "fakectrld.exe"), script(r.events))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(r.token, []byte(winCanaryToken+"\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { killStandIns(t, r.ctrld) })
	return r
}

// cmd is ctrld-install with args, ctrld and the home given.
func (r *winRig) cmd(args ...string) *exec.Cmd {
	c := exec.Command(r.installer, args...)
	c.Env = os.Environ()
	return c
}

// run runs ctrld-install to its end and returns its output and exit status.
func (r *winRig) run(args ...string) (string, int) {
	r.t.Helper()
	c := r.cmd(args...)
	out, err := c.CombinedOutput()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			r.t.Fatalf("running ctrld-install %q: %v", args, err)
		}
		code = ee.ExitCode()
	}
	if strings.Contains(string(out), winCanaryToken) {
		r.t.Errorf("ctrld-install %q printed the token:\n%s", args, out)
	}
	return string(out), code
}

func (r *winRig) install(extra ...string) []string {
	return append([]string{"install", "--token-file", r.token, "--ctrld", r.ctrld, "--home", r.home}, extra...)
}

// starts counts the stand-in's runs of ctrld start.
func (r *winRig) starts() int {
	b, err := os.ReadFile(r.events)
	if err != nil {
		return 0
	}
	n := 0
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		var rec standin.Record
		if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Event == "start" && len(rec.Argv) > 1 && rec.Argv[1] == "start" {
			n++
		}
	}
	return n
}

// lifecycle is ctrld as the tests need it: start registers and starts
// the service, status asks the SCM, uninstall stops and removes it.
func lifecycle(events string) standin.Script {
	return standin.Script{
		Version:   "1.5.0",
		Start:     standin.Action{Record: events, Service: "install", Stdout: []string{"Dec  1 19:13:08.970 NTC Starting service", "Dec  1 19:13:08.970 NTC Service started"}},
		Status:    standin.Action{Service: "running", Stdout: []string{"Dec  1 19:12:52.000 NTC Service is running"}},
		Uninstall: standin.Action{Service: "remove", Stdout: []string{"Nov 30 14:46:09.859 NTC Service uninstalled"}},
	}
}

func TestWindowsInstallVerifyRerunUninstall(t *testing.T) {
	r := newWinRig(t, lifecycle)

	out, code := r.run(r.install("--timeout", "90s")...)
	if code != 0 || !strings.Contains(out, "ctrld-install: provisioning succeeded (exit 0)") {
		t.Fatalf("install exited %d:\n%s", code, out)
	}
	// The post-conditions, from the service control manager itself.
	cfg, state := queryService(t)
	if state != svc.Running {
		t.Errorf("after install the service is in state %d, want running (%d)", state, svc.Running)
	}
	if !strings.Contains(strings.ToLower(cfg.binary), strings.ToLower(filepath.Base(r.ctrld))) || !strings.HasSuffix(cfg.binary, " run") {
		t.Errorf("the service's binary is %q, want the stand-in with run", cfg.binary)
	}
	if cfg.start != windows.SERVICE_AUTO_START {
		t.Errorf("the service's start type is %d, want automatic (%d)", cfg.start, windows.SERVICE_AUTO_START)
	}

	out, code = r.run("status", "--home", r.home, "--format", "json")
	var st map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st["code"] != "OK" {
		t.Errorf("status after install exited %d:\n%s\nwant the recorded OK", code, out)
	}

	out, code = r.run("verify", "--ctrld", r.ctrld, "--timeout", "60s")
	if code != 0 {
		t.Errorf("verify after install exited %d:\n%s", code, out)
	}

	out, code = r.run(r.install("--timeout", "90s", "--json")...)
	var sum map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &sum) != nil || sum["action"] != "skipped" {
		t.Errorf("the re-run exited %d:\n%s\nwant action skipped", code, out)
	}
	if n := r.starts(); n != 1 {
		t.Errorf("ctrld start ran %d times, want once: the re-run must not provision again", n)
	}

	out, code = r.run("uninstall", "--ctrld", r.ctrld, "--home", r.home, "--timeout", "60s")
	if code != 0 {
		t.Errorf("uninstall exited %d:\n%s", code, out)
	}
	if serviceExists(t) {
		t.Error("the service ctrld is still registered after uninstall")
	}
	if left := standIns(t, r.ctrld); len(left) != 0 {
		t.Errorf("stand-in processes %v still run after uninstall", left)
	}
}

// hanging is a ctrld start that starts a child holding its output and
// never ends.
func hanging(events string) standin.Script {
	return standin.Script{
		Version: "1.5.0",
		Start:   standin.Action{Record: events, Grandchild: true, Hang: true},
		Status:  standin.Action{Service: "running"},
	}
}

// The time limit ends ctrld's whole job: no process of it is left.
func TestWindowsTimeoutEndsCtrldsJob(t *testing.T) {
	r := newWinRig(t, hanging)
	start := time.Now()
	out, code := r.run(r.install("--timeout", "10s", "--retries", "0")...)
	if want := codes.Must(codes.CtrldTimeout); code != want.Exit || !strings.Contains(out, "code="+want.Name) {
		t.Errorf("install exited %d after %v:\n%s\nwant %s (exit %d)", code, time.Since(start), out, want.Name, want.Exit)
	}
	if r.starts() != 1 {
		t.Fatalf("ctrld start ran %d times, want once", r.starts())
	}
	if left := waitNoStandIns(t, r.ctrld, 2*time.Second); len(left) != 0 {
		t.Errorf("stand-in processes %v still run after the time limit", left)
	}
}

// ctrld-install ended by TerminateProcess, SIGKILL's counterpart, leaves
// nothing of ctrld behind: its job closes with it, and kill-on-close ends
// ctrld and ctrld's child.
func TestWindowsTerminatedInstallerLeavesNothing(t *testing.T) {
	r := newWinRig(t, hanging)
	c := r.cmd(r.install("--timeout", "120s")...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for r.starts() == 0 || len(standIns(t, r.ctrld)) < 2 {
		if time.Now().After(deadline) {
			c.Process.Kill()
			c.Wait()
			t.Fatalf("ctrld start and its child did not both start within 30s (processes %v)", standIns(t, r.ctrld))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := c.Process.Kill(); err != nil { // TerminateProcess
		t.Fatalf("TerminateProcess: %v", err)
	}
	_ = c.Wait()
	if left := waitNoStandIns(t, r.ctrld, 5*time.Second); len(left) != 0 {
		t.Errorf("stand-in processes %v still run 5s after ctrld-install was terminated", left)
	}
}

// standIns lists the processes whose image is the stand-in at exe, from
// the system's process list. A process whose image cannot be read counts:
// the test must not pass for want of looking.
func standIns(t *testing.T, exe string) []uint32 {
	t.Helper()
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		t.Fatalf("CreateToolhelp32Snapshot: %v", err)
	}
	defer windows.CloseHandle(snap)
	var pe windows.ProcessEntry32
	pe.Size = uint32(unsafe.Sizeof(pe))
	var pids []uint32
	for err = windows.Process32First(snap, &pe); err == nil; err = windows.Process32Next(snap, &pe) {
		if !strings.EqualFold(windows.UTF16ToString(pe.ExeFile[:]), filepath.Base(exe)) {
			continue
		}
		image, err := imagePath(pe.ProcessID)
		if err != nil || strings.EqualFold(image, exe) {
			pids = append(pids, pe.ProcessID)
		}
	}
	return pids
}

func imagePath(pid uint32) (string, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return "", err
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &n); err != nil {
		return "", err
	}
	return windows.UTF16ToString(buf[:n]), nil
}

func waitNoStandIns(t *testing.T, exe string, within time.Duration) []uint32 {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		left := standIns(t, exe)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// killStandIns ends what a failed test left, so the next test starts clean.
func killStandIns(t *testing.T, exe string) {
	for _, pid := range standIns(t, exe) {
		if h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, pid); err == nil {
			windows.TerminateProcess(h, 1)
			windows.CloseHandle(h)
		}
	}
}

type serviceConfig struct {
	binary string
	start  uint32
}

// queryService reads the service's configuration with QueryServiceConfig
// alone: mgr.Service.Config also asks QueryServiceConfig2 for levels Wine
// does not implement.
func queryService(t *testing.T) (serviceConfig, svc.State) {
	t.Helper()
	m, err := mgr.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Disconnect()
	s, err := m.OpenService(serviceName)
	if err != nil {
		t.Fatalf("the service ctrld: %v", err)
	}
	defer s.Close()
	var need uint32
	buf := make([]byte, 8<<10)
	qsc := (*windows.QUERY_SERVICE_CONFIG)(unsafe.Pointer(&buf[0]))
	if err := windows.QueryServiceConfig(s.Handle, qsc, uint32(len(buf)), &need); err != nil {
		t.Fatalf("QueryServiceConfig: %v", err)
	}
	st, err := s.Query()
	if err != nil {
		t.Fatalf("QueryServiceStatus: %v", err)
	}
	return serviceConfig{binary: windows.UTF16PtrToString(qsc.BinaryPathName), start: qsc.StartType}, st.State
}

func serviceExists(t *testing.T) bool {
	t.Helper()
	m, err := mgr.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Disconnect()
	s, err := m.OpenService(serviceName)
	if err != nil {
		return false
	}
	s.Close()
	return true
}

// removeService stops and deletes the service ctrld if it exists, and
// waits until the SCM no longer knows it.
func removeService(t *testing.T) {
	t.Helper()
	m, err := mgr.Connect()
	if err != nil {
		t.Fatalf("connecting to the service control manager: %v", err)
	}
	defer m.Disconnect()
	s, err := m.OpenService(serviceName)
	if err != nil {
		return
	}
	s.Control(svc.Stop)
	s.Delete()
	s.Close()
	deadline := time.Now().Add(10 * time.Second)
	for serviceExists(t) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
}
