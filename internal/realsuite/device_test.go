//go:build linux

package realsuite

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Secrets the scenarios provision with. Each is a canary: ctrld-install
// must never write one (contract sections 3 and 11).
const (
	token       = "tok3nCanaryQx7"
	resolverA   = "resAcanary41z"
	resolverB   = "resBcanary52y"
	resolverBad = "resGONEcanary63x"
	ctrldHome   = "/etc/controld"
	listener    = "127.0.0.1:53"
)

var secrets = []string{token, resolverA, resolverB, resolverBad}

// device is the machine a scenario provisions, seen from inside its
// namespace.
type device struct {
	t         *testing.T
	manager   string
	work      string
	releases  string
	bin       string // the ctrld on disk, where a package puts it
	installer string
	svcFile   string
	tokenFile string
	fake      *Fake
	deadline  time.Time
}

// setUpInside makes the namespace a device: loopback with Control D's
// addresses, private copies of what ctrld writes, the fake Control D, a
// resolv.conf naming it and a CA bundle trusting it.
func setUpInside(t *testing.T, manager string) *device {
	d := &device{t: t, manager: manager, work: os.Getenv(envWork), releases: os.Getenv(envReleases)}
	if d.work == "" || d.releases == "" {
		t.Fatal("the scenario's work directory is not set")
	}
	sec, _ := strconv.ParseInt(os.Getenv(envDeadline), 10, 64)
	d.deadline = time.Unix(sec, 0)
	d.bin = filepath.Join(d.work, "bin", "ctrld")
	d.installer = filepath.Join(d.work, "suite", "ctrld-install")
	d.tokenFile = filepath.Join(d.work, "token")
	if err := os.WriteFile(d.tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Loopback only: the addresses ctrld probes and falls back to are put on
	// lo, so that nothing it dials leaves the namespace.
	d.mustRun("ip", "link", "set", "lo", "up")
	for _, a := range append(append([]string{}, BootstrapAddrs...), APIFallbackAddrs...) {
		bits := "/32"
		if strings.Contains(a, ":") {
			bits = "/128"
		}
		d.mustRun("ip", "addr", "add", a+bits, "dev", "lo")
	}
	if manager == innerSysV {
		d.svcFile = "/etc/init.d/ctrld"
		// An overlay of /etc: ctrld writes its home, the init script and the
		// rc?.d links there, and none of them may reach the host's /etc
		// (a tmpfs over a directory the host lacks would mean creating it
		// there). The upper layer is a tmpfs: overlayfs refuses an upper
		// directory on the overlay root file system a container may have.
		ovl := filepath.Join(d.work, "etc-overlay")
		d.mkdir(ovl)
		d.mount("tmpfs", ovl, "tmpfs", 0, "mode=0755")
		d.mkdir(filepath.Join(ovl, "upper"))
		d.mkdir(filepath.Join(ovl, "work"))
		d.mount("overlay", "/etc", "overlay", 0, "lowerdir=/etc,upperdir="+ovl+"/upper,workdir="+ovl+"/work")
		for _, dir := range []string{"/run", "/var/log"} {
			d.mount("tmpfs", dir, "tmpfs", 0, "mode=0755")
		}
		if fi, err := os.Lstat("/var/run"); err == nil && fi.IsDir() {
			d.mount("tmpfs", "/var/run", "tmpfs", 0, "mode=0755")
		}
	} else {
		d.svcFile = "/etc/systemd/system/ctrld.service"
	}
	// What the daemon said is ctrld's, not ctrld-install's: shown here to
	// explain a failure, it is no leak.
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, f := range []string{"/var/log/ctrld.log", "/var/log/ctrld.err"} {
			if b, err := os.ReadFile(f); err == nil && len(b) > 0 {
				t.Logf("%s, last 30 lines:\n%s", f, lastLines(string(b), 30))
			}
		}
	})
	resolvers := []string{resolverA, resolverB}
	f, err := StartFake(resolvers, map[string]string{token: resolverA})
	if err != nil {
		t.Fatalf("starting the fake Control D: %v", err)
	}
	t.Cleanup(f.Close)
	d.fake = f
	host, _ := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	d.bindFile("/etc/ssl/certs/ca-certificates.crt", append(append(host, '\n'), f.CAPEM...))
	d.bindFile("/etc/resolv.conf", []byte("nameserver "+ResolvConfAddr+"\n"))
	return d
}

func (d *device) mkdir(dir string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		d.t.Fatal(err)
	}
}

func (d *device) mount(src, target, fstype string, flags uintptr, data string) {
	if err := syscall.Mount(src, target, fstype, flags, data); err != nil {
		d.t.Fatalf("mount %s on %s: %v", fstype, target, err)
	}
}

// bindFile puts content over path by a bind mount from the work directory.
// A symlink there (resolv.conf often is one) is replaced by a file first,
// which only ever happens in the namespace's own /etc.
func (d *device) bindFile(path string, content []byte) {
	src := filepath.Join(d.work, strings.ReplaceAll(strings.Trim(path, "/"), "/", "_"))
	if err := os.WriteFile(src, content, 0o644); err != nil {
		d.t.Fatal(err)
	}
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		_ = os.Remove(path)
		d.mkdir(filepath.Dir(path))
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			d.t.Fatal(err)
		}
	}
	d.mount(src, path, "", syscall.MS_BIND, "")
}

func (d *device) mustRun(name string, args ...string) string {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		d.t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// pretendWSL makes the kernel look like WSL 1's to ctrld 1.2.1, which
// otherwise needs a default route (it has none with loopback only) and
// falls back to lo only on WSL 1, where routes are missing too. Only this
// namespace's view changes: files bound over /proc's and uname.
func (d *device) pretendWSL() {
	d.t.Helper()
	release := strings.TrimSpace(d.mustRun("uname", "-r")) + "-Microsoft"
	for path, content := range map[string]string{
		"/proc/sys/kernel/osrelease": release + "\n",
		"/proc/version":              "Linux version " + release + " (Microsoft@Microsoft.com) #1 SMP\n",
	} {
		src := filepath.Join(d.work, filepath.Base(path)+".wsl")
		if err := os.WriteFile(src, []byte(content), 0o644); err != nil {
			d.t.Fatal(err)
		}
		d.mount(src, path, "", syscall.MS_BIND, "")
	}
	uname, err := exec.LookPath("uname")
	if err != nil {
		d.t.Fatal(err)
	}
	src := filepath.Join(d.work, "uname.wsl")
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho 'Linux "+release+" x86_64 GNU/Linux Microsoft'\n"), 0o755); err != nil {
		d.t.Fatal(err)
	}
	d.mount(src, uname, "", syscall.MS_BIND, "")
}

// putCtrld puts a release (e.g. "1.5.0") on disk as a package does.
func (d *device) putCtrld(version string) {
	d.t.Helper()
	copyFile(d.t, filepath.Join(d.releases, fmt.Sprintf(releaseFmt, version)), d.bin)
}

// putDyingBuild puts a build on disk whose daemon exits at once: "run"
// exits 2 and --version says v1.6.0; every other command is 1.5.0 (as in
// ctrld-1.5.0-restart-dying-build.txt).
func (d *device) putDyingBuild() {
	d.t.Helper()
	script := fmt.Sprintf("#!/bin/sh\ncase \"$1\" in\n--version) echo 'ctrld version v1.6.0'; exit 0 ;;\nrun) exit 2 ;;\nesac\nexec %s \"$@\"\n",
		filepath.Join(d.releases, fmt.Sprintf(releaseFmt, "1.5.0")))
	tmp := d.bin + ".pkg"
	if err := os.WriteFile(tmp, []byte(script), 0o755); err != nil {
		d.t.Fatal(err)
	}
	if err := os.Rename(tmp, d.bin); err != nil {
		d.t.Fatal(err)
	}
}

// result is one run of ctrld-install.
type result struct {
	args           []string
	code           int
	stdout, stderr string
	elapsed        time.Duration
}

func (r result) last() string {
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	return lines[len(lines)-1]
}

func (r result) String() string {
	return fmt.Sprintf("ctrld-install %s: exit %d after %s\nstdout:\n%sstderr:\n%s", strings.Join(r.args, " "), r.code, r.elapsed.Round(100*time.Millisecond), r.stdout, r.stderr)
}

// command is ctrld-install with the device's paths and args, its own
// process group and a private TMPDIR.
func (d *device) command(ctx context.Context, sub string, args ...string) *exec.Cmd {
	all := []string{}
	if sub != "" {
		all = append(all, sub)
	}
	if sub == "status" {
		all = append(all, "--home", ctrldHome)
	} else {
		all = append(all, "--ctrld", d.bin, "--home", ctrldHome, "--service-file", d.svcFile)
	}
	all = append(all, args...)
	cmd := exec.CommandContext(ctx, d.installer, all...)
	cmd.Dir = d.work
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR=" + filepath.Join(d.work, "tmp"), "LANG=C"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// run runs ctrld-install to its end, killed (with its group) after limit.
func (d *device) run(limit time.Duration, sub string, args ...string) result {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := d.command(ctx, sub, args...)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{args: cmd.Args[1:], stdout: stdout.String(), stderr: stderr.String(), elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		d.t.Fatalf("ctrld-install: %v", err)
	}
	if ctx.Err() != nil {
		d.t.Errorf("ctrld-install did not end within %s (killed)", limit)
	}
	d.t.Logf("%s", r)
	d.checkSecrets("ctrld-install's output", r.stdout+r.stderr)
	d.checkSecrets("the outcome record", string(d.recordBytes()))
	return r
}

func (d *device) checkSecrets(where, s string) {
	d.t.Helper()
	for _, secret := range secrets {
		if strings.Contains(s, secret) {
			d.t.Errorf("a secret (%.3s...) appears in %s", secret, where)
		}
	}
}

// expect checks a run's exit status and lines (the last line included).
func (d *device) expect(r result, code int, lines ...string) {
	d.t.Helper()
	if r.code != code {
		d.t.Errorf("exit %d, want %d", r.code, code)
	}
	for _, l := range lines {
		if !strings.Contains(r.stdout, "ctrld-install: "+l+"\n") {
			d.t.Errorf("stdout lacks the line %q", "ctrld-install: "+l)
		}
	}
	if len(lines) > 0 && r.last() != "ctrld-install: "+lines[len(lines)-1] {
		d.t.Errorf("last line %q, want %q", r.last(), "ctrld-install: "+lines[len(lines)-1])
	}
}

func (d *device) recordBytes() []byte {
	b, _ := os.ReadFile(filepath.Join(ctrldHome, "ctrld-install-result.json"))
	return b
}

// record is the outcome record's fields the scenarios check.
type record struct {
	Result   string `json:"result"`
	Code     string `json:"code"`
	ExitCode int    `json:"exit_code"`
	Action   string `json:"action"`
	Rollback string `json:"rollback"`
	Phase    string `json:"phase"`
}

func (d *device) record() record {
	d.t.Helper()
	var rec record
	if err := json.Unmarshal(d.recordBytes(), &rec); err != nil {
		d.t.Errorf("the outcome record: %v", err)
	}
	return rec
}

func (d *device) expectRecord(result, code, action string) {
	d.t.Helper()
	rec := d.record()
	if rec.Result != result || rec.Code != code || rec.Action != action {
		d.t.Errorf("record says result=%q code=%q action=%q, want %q %q %q", rec.Result, rec.Code, rec.Action, result, code, action)
	}
}

// failureLine is the identifier line's grammar (contract section 3).
var failureLine = regexp.MustCompile(`^ctrld-install: [a-z ]*failed: stage=[a-z]* code=[A-Z_]* \(exit [0-9]*\)$`)

// ctrldCommands lists the PIDs of ctrld processes running sub ("restart").
func ctrldCommands(sub string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		args := strings.Split(string(b), "\x00")
		if len(args) > 1 && strings.HasPrefix(filepath.Base(args[0]), "ctrld") && args[1] == sub {
			pids = append(pids, pid)
		}
	}
	return pids
}

// daemons lists the PIDs of processes running "ctrld run".
func daemons() []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		args := strings.Split(string(b), "\x00")
		if len(args) > 1 && filepath.Base(args[0]) == "ctrld" && args[1] == "run" {
			if st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); !bytes.Contains(st, []byte(") Z ")) {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// daemon is the one running daemon's PID, 0 when none runs; more than one
// fails the test.
func (d *device) daemon() int {
	d.t.Helper()
	p := daemons()
	switch len(p) {
	case 0:
		return 0
	case 1:
		return p[0]
	}
	d.t.Errorf("more than one ctrld daemon runs: %v", p)
	return p[0]
}

// daemonExe says which file the running daemon was started from.
func (d *device) daemonRuns(version string) {
	d.t.Helper()
	pid := d.daemon()
	if pid == 0 {
		d.t.Errorf("no ctrld daemon runs, want ctrld %s", version)
		return
	}
	want, err := os.ReadFile(filepath.Join(d.releases, fmt.Sprintf(releaseFmt, version)))
	if err != nil {
		d.t.Fatal(err)
	}
	got, err := os.ReadFile(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		d.t.Errorf("reading the daemon's executable: %v", err)
		return
	}
	if !bytes.Equal(got, want) {
		d.t.Errorf("the daemon (pid %d) does not run ctrld %s", pid, version)
	}
}

// onDisk checks which release is the ctrld on disk.
func (d *device) onDisk(version string) {
	d.t.Helper()
	want, _ := os.ReadFile(filepath.Join(d.releases, fmt.Sprintf(releaseFmt, version)))
	got, _ := os.ReadFile(d.bin)
	if !bytes.Equal(got, want) {
		d.t.Errorf("the ctrld on disk is not %s", version)
	}
}

// answers polls the listener for ctrld.test. until it answers as ctrld
// does (A 0.0.0.0 from 1.4.0 on; any answer before), for at most settle.
func (d *device) answers(settle time.Duration, ownAnswer bool) {
	d.t.Helper()
	if err := pollListener(settle, ownAnswer); err != nil {
		d.t.Errorf("the listener %s does not answer ctrld.test. as ctrld does within %s: %v", listener, settle, err)
	}
}

func pollListener(settle time.Duration, ownAnswer bool) error {
	end := time.Now().Add(settle)
	var err error
	for {
		var rcode int
		var addrs []netip.Addr
		rcode, addrs, err = Ask(context.Background(), listener, "ctrld.test.", typeA, 2*time.Second)
		if err == nil {
			switch {
			case rcode != 0:
				err = fmt.Errorf("rcode %d", rcode)
			case !ownAnswer && len(addrs) > 0:
				return nil
			case len(addrs) == 1 && addrs[0] == netip.IPv4Unspecified():
				return nil
			default:
				err = fmt.Errorf("answered %v, not ctrld's own 0.0.0.0", addrs)
			}
		}
		if time.Now().After(end) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// goneAfterUninstall checks that no daemon runs and nothing answers on
// the listener once uninstall has returned, allowing a daemon that is
// still exiting a few seconds.
func (d *device) goneAfterUninstall() {
	d.t.Helper()
	start := time.Now()
	for len(daemons()) > 0 && time.Since(start) < 10*time.Second {
		time.Sleep(100 * time.Millisecond)
	}
	if p := daemons(); len(p) > 0 {
		d.t.Errorf("a ctrld daemon (pid %v) still runs 10 s after uninstall succeeded", p)
	} else {
		d.t.Logf("no daemon runs %s after uninstall returned", time.Since(start).Round(100*time.Millisecond))
	}
	d.silent()
}

// silent checks that nothing answers on the listener.
func (d *device) silent() {
	d.t.Helper()
	if _, _, err := Ask(context.Background(), listener, "ctrld.test.", typeA, 2*time.Second); err == nil {
		d.t.Errorf("the listener %s still answers", listener)
	}
}

// killDaemon SIGKILLs the running daemon and waits until it is gone.
func (d *device) killDaemon() int {
	d.t.Helper()
	pid := d.daemon()
	if pid == 0 {
		d.t.Fatal("no daemon to kill")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		d.t.Fatal(err)
	}
	d.waitFor(10*time.Second, "the killed daemon to go", func() bool { return len(daemons()) == 0 })
	return pid
}

// waitFor polls cond for at most limit; false at the end fails the test.
func (d *device) waitFor(limit time.Duration, what string, cond func() bool) {
	d.t.Helper()
	end := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(end) {
			d.t.Fatalf("waited %s for %s", limit, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// serviceNames checks that the service definition names the resolver.
func (d *device) serviceNames(resolver string) {
	d.t.Helper()
	b, err := os.ReadFile(d.svcFile)
	if err != nil {
		d.t.Errorf("the service definition: %v", err)
		return
	}
	if !bytes.Contains(b, []byte(resolver)) {
		d.t.Errorf("the service definition does not name the resolver %.3s...", resolver)
	}
}

// systemctl runs systemctl and returns its trimmed output and exit status.
func systemctl(args ...string) (string, int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "systemctl", args...).Output()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
	}
	return strings.TrimSpace(string(out)), code
}

// ctrldStatus is the exit status of the ctrld on disk's "status" command.
func (d *device) ctrldStatus(args ...string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if len(args) == 0 {
		args = []string{"status"}
	}
	cmd := exec.CommandContext(ctx, d.bin, args...)
	cmd.Dir = d.work
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// cutShort runs ctrld-install with args and sends it sig once its record
// says phase and cond holds: an MDM agent's own time limit (SIGKILL) or a
// shutdown (SIGTERM) in the middle of a change.
func (d *device) cutShort(sig syscall.Signal, phase string, cond func() bool, args ...string) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), installLimit)
	defer cancel()
	cmd := d.command(ctx, "", args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	d.waitFor(time.Minute, "the record to say "+phase, func() bool {
		rec := record{}
		_ = json.Unmarshal(d.recordBytes(), &rec)
		return rec.Result == "running" && rec.Phase == phase
	})
	d.waitFor(30*time.Second, "the moment to cut the run short", cond)
	_ = cmd.Process.Signal(sig)
	_ = cmd.Wait()
	d.t.Logf("sent %s to ctrld-install at %s; it had printed:\n%s", sig, phase, out.String())
	d.checkSecrets("ctrld-install's output", out.String())
}
