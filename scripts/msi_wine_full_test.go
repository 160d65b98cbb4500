package scripts

// The MSI under Wine's msiexec: a prefix of its own for each sequence of
// installations, the stand-in ctrld registering a real service there.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// wineRig is one Wine prefix with a warm wineserver.
type wineRig struct {
	r            *pkgRig
	wine, prefix string
	env          []string
	driveC, home string
}

// newWineRig copies a prefix made once by wine-prefix.sh: making one takes
// about 20 s, copying it a fraction of one.
func (r *pkgRig) newWineRig(t *testing.T, name string) *wineRig {
	t.Helper()
	wine := os.Getenv("WINE")
	if wine == "" {
		wine = "/usr/lib/wine/wine64"
	}
	if _, err := os.Stat(wine); err != nil {
		t.Fatalf("%s=1 but no Wine: %v", packagesFullEnv, err)
	}
	clean := filepath.Join(r.dir, "prefix-clean")
	if _, err := os.Stat(clean); err != nil {
		r.run(r.repo, nil, "internal/tools/wineshim/wine-prefix.sh", clean)
	}
	w := &wineRig{r: r, wine: wine, prefix: filepath.Join(r.dir, "prefix-"+name)}
	r.run(r.dir, nil, "cp", "-a", clean, w.prefix)
	w.env = []string{"WINEPREFIX=" + w.prefix, "WINEDEBUG=-all"}
	w.driveC = filepath.Join(w.prefix, "drive_c")
	w.home = filepath.Join(w.driveC, "ControlD")
	wineserver := filepath.Join(filepath.Dir(wine), "wineserver")
	r.run(r.dir, w.env, wineserver, "-p")
	t.Cleanup(func() { _, _ = r.try(r.dir, w.env, wineserver, "-k") })
	return w
}

// winPath is a Unix path as Wine's drive Z: spells it.
func winPath(p string) string { return "Z:" + strings.ReplaceAll(p, "/", `\`) }

// msiexec runs msiexec quietly with a verbose log and returns its output,
// its exit status and the log.
func (w *wineRig) msiexec(t *testing.T, logName string, args ...string) (string, int, string) {
	t.Helper()
	log := filepath.Join(w.driveC, logName)
	out, code := w.r.try(w.r.dir, w.env, w.wine, append([]string{"msiexec"}, append(args, "/qn", "/l*v", winPath(log))...)...)
	return out, code, string(w.r.read(log))
}

// products lists the product codes Programs and Features shows as
// ctrld-install.
func (w *wineRig) products(t *testing.T) []string {
	t.Helper()
	var codes []string
	for _, l := range strings.Split(w.r.run(w.r.dir, w.env, w.wine, "uninstaller", "--list"), "\n") {
		if code, ok := strings.CutSuffix(strings.TrimSpace(l), "|||ctrld-install"); ok {
			codes = append(codes, code)
		}
	}
	return codes
}

// displayVersion is the version Programs and Features shows for a product
// (its Uninstall key).
func (w *wineRig) displayVersion(t *testing.T, code string) string {
	t.Helper()
	out := w.r.run(w.r.dir, w.env, w.wine, "reg", "query", `HKLM\Software\Microsoft\Windows\CurrentVersion\Uninstall\`+code, "/v", "DisplayVersion")
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[0] == "DisplayVersion" {
			return f[2]
		}
	}
	return ""
}

// daemons are the processes of this prefix that run C:\ControlD\ctrld.exe
// as the service control manager starts it. Other tests on the machine run
// Wine prefixes of their own: the environment tells them apart.
func (w *wineRig) daemons() []int {
	var pids []int
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv := strings.Split(string(cmdline), "\x00")
		if len(argv) < 2 || !strings.EqualFold(argv[0], `C:\ControlD\ctrld.exe`) || argv[1] != "run" {
			continue
		}
		environ, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err != nil || !slices.Contains(strings.Split(string(environ), "\x00"), "WINEPREFIX="+w.prefix) {
			continue
		}
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	return pids
}

// watchDaemons records every daemon seen until the returned function is
// called, which returns them in the order they were first seen.
func (w *wineRig) watchDaemons() func() []int {
	var (
		mu   sync.Mutex
		seen []int
		done = make(chan struct{})
		over = make(chan struct{})
	)
	look := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range w.daemons() {
			if !slices.Contains(seen, p) {
				seen = append(seen, p)
			}
		}
	}
	look()
	go func() {
		defer close(over)
		for {
			select {
			case <-done:
				look()
				return
			case <-time.After(20 * time.Millisecond):
				look()
			}
		}
	}()
	return func() []int {
		close(done)
		<-over
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// buildMSI builds the package of version v (a.b.c) with a build of the
// stand-in ctrld of its own: the master's bytes with v in their trailer,
// as each release carries another ctrld.exe.
func (r *pkgRig) buildMSI(t *testing.T, v string) string {
	t.Helper()
	dir := filepath.Join(r.dir, "msi-"+v)
	ctrld := filepath.Join(dir, "ctrld.exe")
	r.write(ctrld, append(r.read(r.windowsCtrld), []byte(standin.BuildTrailer+v+"\n")...), 0o755)
	msi := filepath.Join(dir, "ctrld-install_"+v+".msi")
	r.run(r.dir, nil, "bash", filepath.Join(r.repo, "scripts/msi/build-msi.sh"), "--ctrld-install", r.windows, "--ctrld", ctrld,
		"--version", v, "--output", msi)
	return msi
}

// msiRecord is what the upgrade test reads of ctrld-install's outcome
// record.
type msiRecord struct {
	Result, Action, Code string
}

// checkMSIUpgradesUnderWine installs 0.2.0, upgrades a PIN-protected
// device to 0.2.1, then to a 0.2.2 whose provisioning fails.
func (r *pkgRig) checkMSIUpgradesUnderWine(t *testing.T, token string) {
	started := time.Now()
	msis := map[string]string{}
	for _, v := range []string{"0.2.0", "0.2.1", "0.2.2"} {
		msis[v] = r.buildMSI(t, v)
	}
	w := r.newWineRig(t, "upgrade")
	t.Logf("built three packages and the prefix in %v", time.Since(started).Round(100*time.Millisecond))
	events := filepath.Join(r.dir, "upgrade-events.jsonl")
	const pin = "4711"
	// working: ctrld's commands do what ctrld does to the service control
	// manager. pin: start and uninstall need the deactivation PIN, as on a
	// device whose ctrld is protected by one (a restart does not).
	// Otherwise the device answers no status, and restart and start fail.
	script := func(working bool, pin string) {
		t.Helper()
		rec := winPath(events)
		s := standin.Script{
			Version: "1.5.0",
			Builds: map[string]standin.Build{
				"0.2.0": {Version: "1.5.0"}, "0.2.1": {Version: "1.5.1"}, "0.2.2": {Version: "1.5.2"},
			},
			Start:     standin.Action{Record: rec, RequirePIN: pin, Service: "install", Stdout: []string{"Starting service"}},
			Status:    standin.Action{Service: "running", Stdout: []string{"Service is running"}},
			Restart:   standin.Action{Record: rec, Service: "install", Stdout: []string{"Service restarted"}},
			Uninstall: standin.Action{Record: rec, RequirePIN: pin, Service: "remove", Stdout: []string{"Service uninstalled"}},
		}
		if !working {
			// A start that fails as a PIN check (126) counts as managed
			// under the intune profile: the provisioning must fail for
			// another reason.
			s.Start = standin.Action{Record: rec, Stdout: []string{"Starting service"}, Exit: 1}
			s.Status = standin.Action{Stdout: []string{"Service is not running"}, Exit: 1}
			s.Restart = standin.Action{Record: rec, Stdout: []string{"Service restarted"}, Exit: 1}
		}
		if err := os.MkdirAll(w.home, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := standin.WriteScript(filepath.Join(w.home, "ctrld.script.json"), s); err != nil {
			t.Fatal(err)
		}
		r.write(events, nil, 0o644)
	}
	ctrldRan := func() string { return strings.TrimSpace(string(r.read(events))) }
	record := func() msiRecord {
		t.Helper()
		var rec msiRecord
		if err := json.Unmarshal(r.read(filepath.Join(w.home, "ctrld-install-result.json")), &rec); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	build := func() string { return standin.BuildLabel(filepath.Join(w.home, "ctrld.exe")) }
	logSince := func(n int) string { return string(r.read(filepath.Join(w.home, "ctrld-install.log")))[n:] }
	logLen := func() int { return len(r.read(filepath.Join(w.home, "ctrld-install.log"))) }
	timed := func(what string, f func()) {
		t0 := time.Now()
		f()
		t.Logf("%s: %v", what, time.Since(t0).Round(100*time.Millisecond))
	}

	script(true, "")
	timed("installing 0.2.0", func() {
		if out, code, log := w.msiexec(t, "install-0.2.0.log", "/i", winPath(msis["0.2.0"]), "CTRLD_TOKEN_FILE="+winPath(token)); code != 0 {
			t.Fatalf("installing 0.2.0: msiexec exited %d\n%s\n%s", code, out, log)
		}
	})
	before := w.daemons()
	if len(before) != 1 || build() != "0.2.0" {
		t.Fatalf("after installing 0.2.0: daemons %v, ctrld.exe of build %q", before, build())
	}

	// The PIN-protected device is upgraded in place: the old package's
	// uninstall action (ctrld uninstall, which would need the PIN) does not
	// run, the service is stopped for the new ctrld.exe and started once,
	// and ctrld-install finds it provisioned.
	script(true, pin)
	mark := logLen()
	var seen []int
	timed("upgrading to 0.2.1", func() {
		stop := w.watchDaemons()
		out, code, log := w.msiexec(t, "upgrade-0.2.1.log", "/i", winPath(msis["0.2.1"]), "CTRLD_TOKEN_FILE="+winPath(token))
		seen = stop()
		if code != 0 {
			t.Fatalf("upgrading to 0.2.1: msiexec exited %d, want 0\n%s\n%s\nctrld-install's log:\n%s", code, out, log, logSince(mark))
		}
	})
	if ran := ctrldRan(); ran != "" {
		t.Errorf("the upgrade ran ctrld's commands (an uninstall or a provisioning):\n%s", ran)
	}
	if own := logSince(mark); strings.Contains(own, "command uninstall") || !strings.Contains(own, "command install") {
		t.Errorf("ctrld-install during the upgrade:\n%s", own)
	}
	after := w.daemons()
	if len(seen) != 2 || seen[0] != before[0] || len(after) != 1 || after[0] != seen[1] {
		t.Errorf("daemons: %v before, %v seen during the upgrade, %v after; want the old one stopped and one new one started", before, seen, after)
	}
	// A running ctrld.exe is not overwritten: Windows Installer, and Wine's,
	// would schedule the replacement for the next reboot and end with
	// 3010.
	if got := build(); got != "0.2.1" {
		t.Errorf("ctrld.exe after the upgrade is build %q, want 0.2.1", got)
	}
	if out, code := r.try(r.dir, w.env, w.wine, "reg", "query", `HKLM\System\CurrentControlSet\Control\Session Manager`, "/v", "PendingFileRenameOperations"); code == 0 {
		t.Errorf("the upgrade left a file to be replaced at the next reboot:\n%s", out)
	}
	rec := record()
	if rec.Result != "ok" || (rec.Action != "upgraded" && rec.Action != "skipped") {
		t.Errorf("the record after the upgrade says %+v, want ok, upgraded or skipped", rec)
	}
	t.Logf("the upgrade: daemons %v seen, the record %+v", seen, rec)
	upgraded := w.products(t)
	if len(upgraded) != 1 || w.displayVersion(t, upgraded[0]) != "0.2.1" {
		t.Fatalf("Programs and Features lists %v after the upgrade, want 0.2.1 alone", upgraded)
	}

	// 0.2.2 installs, its provisioning fails, and the installation rolls
	// back: 0.2.1 stays registered and its service runs.
	script(false, pin)
	mark = logLen()
	timed("upgrading to a failing 0.2.2", func() {
		out, code, log := w.msiexec(t, "upgrade-0.2.2.log", "/i", winPath(msis["0.2.2"]), "CTRLD_TOKEN_FILE="+winPath(token))
		// Windows' msiexec ends with 1603, Wine's with 1627, whose low 8
		// bits reach Unix.
		if code != 1627&0xff {
			t.Errorf("the failed upgrade: msiexec exited %d, want Wine's 1627 & 0xff = %d\n%s\n%s", code, 1627&0xff, out, log)
		}
	})
	if own := logSince(mark); !strings.Contains(own, "provisioning failed") || strings.Contains(own, "command uninstall") {
		t.Errorf("ctrld-install during the failed upgrade:\n%s", own)
	}
	if ran := ctrldRan(); strings.Contains(ran, `"uninstall"`) {
		t.Errorf("the failed upgrade ran ctrld uninstall:\n%s", ran)
	}
	if got := w.products(t); !slices.Equal(got, upgraded) || w.displayVersion(t, got[0]) != "0.2.1" {
		t.Errorf("Programs and Features lists %v after the failed upgrade, want 0.2.1's %v", got, upgraded)
	}
	if d := w.daemons(); len(d) != 1 {
		t.Errorf("daemons after the failed upgrade: %v, want one", d)
	}
	// Windows Installer keeps each file it replaces and puts it back when
	// the installation rolls back; Wine's removes the files the failed
	// installation laid and puts none back.
	_, err := os.Stat(filepath.Join(w.home, "ctrld-install.exe"))
	t.Logf("under Wine the rollback left ctrld.exe of build %q and ctrld-install.exe: %v (Windows puts 0.2.1's back)", build(), err == nil)
	t.Logf("the upgrade test took %v", time.Since(started).Round(100*time.Millisecond))
}
