package scripts

// The three packages built as a release builds them and read back with
// tools that share no code with their writers: bsdtar for the macOS pkg
// (xar, cpio, the checksums), dpkg, dpkg-deb and lintian for the .deb,
// msiinfo, msiextract and Wine's msiexec for the MSI. CI runs them:
//
//	CTRLD_INSTALL_PACKAGES_FULL=1 go test -count=1 -run '^TestPackages' ./scripts/
//
// Debian's libarchive-tools, dpkg-dev, lintian, wixl, msitools, wine64 and
// gcc-mingw-w64-x86-64 provide the tools.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

const packagesFullEnv = "CTRLD_INSTALL_PACKAGES_FULL"

const pkgCanary = "CANARYTOKEN0123456789abcdef"

// pkgRig holds what the package tests build once: the binaries, mkpkg,
// the repository's root and a scratch directory.
type pkgRig struct {
	t    *testing.T
	repo string
	dir  string
	// linux/amd64, the darwin universal binary, a thin darwin one as the
	// pkg's ctrld, windows/amd64 and the stand-in ctrld for Windows and
	// Linux.
	linux, darwin, darwinCtrld, windows, windowsCtrld, linuxCtrld, mkpkg string
}

func newPkgRig(t *testing.T) *pkgRig {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("builds the packages on Linux, as CI does")
	}
	if testing.Short() || os.Getenv(packagesFullEnv) != "1" {
		t.Skipf("builds every package and installs the MSI under Wine; %s=1 runs it", packagesFullEnv)
	}
	for _, tool := range []string{"bsdtar", "dpkg", "dpkg-deb", "lintian", "wixl", "msiinfo", "msiextract", "msibuild", "bash", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s=1 but %s is missing", packagesFullEnv, tool)
		}
	}
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	r := &pkgRig{t: t, repo: filepath.Dir(here), dir: t.TempDir()}
	bin := filepath.Join(r.dir, "bin")
	type target struct{ goos, goarch, pkg, out string }
	targets := []target{
		{"linux", "amd64", "./cmd/ctrld-install", "ctrld-install_linux"},
		{"linux", "amd64", "./bench/cmd/fakectrld", "ctrld_linux"},
		{"darwin", "amd64", "./cmd/ctrld-install", "ctrld-install_darwin_amd64"},
		{"darwin", "arm64", "./cmd/ctrld-install", "ctrld-install_darwin_arm64"},
		{"windows", "amd64", "./cmd/ctrld-install", "ctrld-install.exe"},
		{"windows", "amd64", "./bench/cmd/fakectrld", "ctrld.exe"},
		{runtime.GOOS, runtime.GOARCH, "./internal/tools/mkpkg", "mkpkg"},
	}
	for _, tg := range targets {
		c := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -buildid=", "-o", filepath.Join(bin, tg.out), tg.pkg)
		c.Dir = r.repo
		c.Env = append(os.Environ(), "GOOS="+tg.goos, "GOARCH="+tg.goarch, "CGO_ENABLED=0")
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("building %s for %s/%s: %v\n%s", tg.pkg, tg.goos, tg.goarch, err, out)
		}
	}
	r.darwin = filepath.Join(bin, "ctrld-install_darwin_universal")
	r.run(r.repo, nil, "go", "run", "./internal/machofat/cmd/machofat", "-o", r.darwin,
		filepath.Join(bin, "ctrld-install_darwin_amd64"), filepath.Join(bin, "ctrld-install_darwin_arm64"))
	r.linux, r.linuxCtrld = filepath.Join(bin, "ctrld-install_linux"), filepath.Join(bin, "ctrld_linux")
	r.darwinCtrld = filepath.Join(bin, "ctrld-install_darwin_arm64")
	r.windows, r.windowsCtrld = filepath.Join(bin, "ctrld-install.exe"), filepath.Join(bin, "ctrld.exe")
	r.mkpkg = filepath.Join(bin, "mkpkg")
	return r
}

// run runs a command to its end, failing the test unless it exits 0, and
// returns its combined output.
func (r *pkgRig) run(dir string, env []string, name string, args ...string) string {
	r.t.Helper()
	out, code := r.try(dir, env, name, args...)
	if code != 0 {
		r.t.Fatalf("%s %s: exit %d\n%s", name, strings.Join(args, " "), code, out)
	}
	return out
}

func (r *pkgRig) try(dir string, env []string, name string, args ...string) (string, int) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, name, args...)
	c.Dir = dir
	c.Env = append(os.Environ(), env...)
	// A file, not a pipe: wineserver and the services Wine starts keep
	// what they inherit open long after the command has ended.
	f, err := os.CreateTemp(r.dir, "output-*")
	if err != nil {
		r.t.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	c.Stdout, c.Stderr = f, f
	err = c.Run()
	out, rerr := os.ReadFile(f.Name())
	if rerr != nil {
		r.t.Fatal(rerr)
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	r.t.Fatalf("%s: %v", name, err)
	return "", 0
}

func (r *pkgRig) read(path string) []byte {
	r.t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		r.t.Fatal(err)
	}
	return b
}

func (r *pkgRig) write(path string, b []byte, mode os.FileMode) {
	r.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(path, b, mode); err != nil {
		r.t.Fatal(err)
	}
}

func TestPackages(t *testing.T) {
	r := newPkgRig(t)
	token := filepath.Join(r.dir, "token")
	r.write(token, []byte(pkgCanary+"\n"), 0o600)
	t.Run("pkg", func(t *testing.T) { r.checkPkg(t, token) })
	t.Run("uninstall pkg", r.checkUninstallPkg)
	t.Run("deb", r.checkDeb)
	t.Run("deb lifecycle", func(t *testing.T) { r.checkDebLifecycle(t, token) })
	msi := filepath.Join(r.dir, "ctrld-install.msi")
	t.Run("msi tables", func(t *testing.T) { r.checkMSI(t, msi) })
	t.Run("msi under Wine", func(t *testing.T) { r.checkMSIUnderWine(t, msi, token) })
	t.Run("msi upgrades under Wine", func(t *testing.T) { r.checkMSIUpgradesUnderWine(t, token) })
}

func (r *pkgRig) checkPkg(t *testing.T, token string) {
	out := filepath.Join(r.dir, "pkg")
	args := []string{"--ctrld-install", r.darwin, "--ctrld", r.darwinCtrld, "--version", "1.2.3", "--token-file", token}
	first, second := filepath.Join(out, "a.pkg"), filepath.Join(out, "b.pkg")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	r.run(r.repo, nil, r.mkpkg, append(args, "--output", first)...)
	r.run(r.repo, nil, r.mkpkg, append(args, "--output", second)...)
	if !bytes.Equal(r.read(first), r.read(second)) {
		t.Error("two builds of the pkg differ")
	}
	if fi, err := os.Stat(first); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the pkg holding the token is %v, want mode 0600", fi.Mode())
	}
	want := "Distribution\ncom.controld.ctrld.pkg\ncom.controld.ctrld.pkg/Bom\ncom.controld.ctrld.pkg/Payload\ncom.controld.ctrld.pkg/Scripts\ncom.controld.ctrld.pkg/PackageInfo\n"
	if got := r.run(out, nil, "bsdtar", "-tf", first); got != want {
		t.Errorf("bsdtar -tf lists\n%s\nwant\n%s", got, want)
	}
	// bsdtar checks the TOC's checksum and each file's: a corrupt copy
	// must fail to extract, the real one must not.
	x := filepath.Join(out, "x")
	r.run(out, nil, "mkdir", x)
	r.run(out, nil, "bsdtar", "-xf", first, "-C", x)
	bad := r.read(first)
	bad[len(bad)-10] ^= 0xff
	r.write(filepath.Join(out, "bad.pkg"), bad, 0o600)
	r.run(out, nil, "mkdir", filepath.Join(out, "bad"))
	if got, code := r.try(out, nil, "bsdtar", "-xf", filepath.Join(out, "bad.pkg"), "-C", filepath.Join(out, "bad")); code == 0 || !strings.Contains(got, "Sumcheck error") {
		t.Errorf("bsdtar extracted a corrupt pkg (exit %d):\n%s", code, got)
	}

	comp := filepath.Join(x, "com.controld.ctrld.pkg")
	listing := r.run(out, nil, "bsdtar", "-tvf", filepath.Join(comp, "Payload"), "--numeric-owner")
	lines := strings.Split(strings.TrimSpace(listing), "\n")
	if len(lines) != 6 {
		t.Fatalf("the Payload lists\n%s\nwant 6 entries", listing)
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if f[2] != "0" || f[3] != "0" {
			t.Errorf("the Payload entry %q is not root:wheel (0:0)", l)
		}
		name := f[len(f)-1]
		wantMode := "drwxr-xr-x"
		if name == "./usr/local/bin/ctrld" || name == "./usr/local/bin/ctrld-install" {
			wantMode = "-rwxr-xr-x"
		}
		if f[0] != wantMode {
			t.Errorf("the Payload entry %q has mode %s, want %s", name, f[0], wantMode)
		}
	}
	payload := filepath.Join(out, "payload")
	r.run(out, nil, "mkdir", payload)
	r.run(out, nil, "bsdtar", "-xf", filepath.Join(comp, "Payload"), "-C", payload)
	if !bytes.Equal(r.read(filepath.Join(payload, "usr/local/bin/ctrld-install")), r.read(r.darwin)) {
		t.Error("the Payload's ctrld-install is not the universal binary")
	}
	if !bytes.Equal(r.read(filepath.Join(payload, "usr/local/bin/ctrld")), r.read(r.darwinCtrld)) {
		t.Error("the Payload's ctrld is not the one given")
	}
	scripts := filepath.Join(out, "scripts")
	r.run(out, nil, "mkdir", scripts)
	r.run(out, nil, "bsdtar", "-xf", filepath.Join(comp, "Scripts"), "-C", scripts)
	if !bytes.Equal(r.read(filepath.Join(scripts, "postinstall")), r.read(filepath.Join(r.repo, "scripts/pkg/postinstall"))) {
		t.Error("the pkg's postinstall is not scripts/pkg/postinstall byte for byte")
	}
	for name, mode := range map[string]os.FileMode{"postinstall": 0o755, "provision_token": 0o600} {
		if fi, err := os.Stat(filepath.Join(scripts, name)); err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s: %v, want mode %v", name, err, mode)
		}
	}
	if !bytes.Equal(r.read(filepath.Join(scripts, "provision_token")), r.read(token)) {
		t.Error("provision_token is not the token file")
	}
	dist := string(r.read(filepath.Join(x, "Distribution")))
	for _, s := range []string{`hostArchitectures="x86_64,arm64"`, `<os-version min="12.0">`, `version="1.2.3"`} {
		if !strings.Contains(dist, s) {
			t.Errorf("the Distribution lacks %s:\n%s", s, dist)
		}
	}
}

func (r *pkgRig) checkUninstallPkg(t *testing.T) {
	out := filepath.Join(r.dir, "upkg")
	pkg := filepath.Join(out, "u.pkg")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	r.run(r.repo, nil, r.mkpkg, "--uninstall", "--version", "1.2.3", "--output", pkg)
	want := "Distribution\ncom.controld.ctrld.uninstall.pkg\ncom.controld.ctrld.uninstall.pkg/Scripts\ncom.controld.ctrld.uninstall.pkg/PackageInfo\n"
	if got := r.run(out, nil, "bsdtar", "-tf", pkg); got != want {
		t.Errorf("bsdtar -tf lists\n%s\nwant\n%s", got, want)
	}
	r.run(out, nil, "bsdtar", "-xf", pkg)
	r.run(out, nil, "bsdtar", "-xf", "com.controld.ctrld.uninstall.pkg/Scripts")
	if !bytes.Equal(r.read(filepath.Join(out, "postinstall")), r.read(filepath.Join(r.repo, "scripts/pkg/uninstall-postinstall.sh"))) {
		t.Error("the uninstall pkg's postinstall is not scripts/pkg/uninstall-postinstall.sh byte for byte")
	}
}

// dpkgRoot makes an empty dpkg database under a throwaway root.
func (r *pkgRig) dpkgRoot(t *testing.T) string {
	root := t.TempDir()
	for _, d := range []string{"var/lib/dpkg/updates", "var/lib/dpkg/info", "etc"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r.write(filepath.Join(root, "var/lib/dpkg/status"), nil, 0o644)
	return root
}

// dpkg runs dpkg on root. The maintainer scripts run on this machine, not
// in a chroot (the root has no shell), with DPKG_ROOT in front of their
// paths.
func (r *pkgRig) dpkg(root string, args ...string) (string, int) {
	return r.try(root, nil, "dpkg", append([]string{"--root=" + root, "--force-script-chrootless", "--force-not-root", "--log=/dev/null"}, args...)...)
}

func (r *pkgRig) checkDeb(t *testing.T) {
	out := filepath.Join(r.dir, "deb")
	a, b := filepath.Join(out, "a.deb"), filepath.Join(out, "b.deb")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	build := func(output string) {
		r.run(out, []string{"SOURCE_DATE_EPOCH=1700000000"}, "bash", filepath.Join(r.repo, "scripts/deb/build-deb.sh"),
			"--ctrld-install", r.linux, "--ctrld", r.linuxCtrld, "--version", "1.2.3-4-gabc", "--arch", "amd64", "--output", output)
	}
	build(a)
	build(b)
	if !bytes.Equal(r.read(a), r.read(b)) {
		t.Error("two builds of the .deb differ")
	}
	info := r.run(out, nil, "dpkg-deb", "-f", a, "Package", "Version", "Architecture")
	if want := "Package: ctrld-install\nVersion: 1.2.3+4+gabc\nArchitecture: amd64\n"; info != want {
		t.Errorf("dpkg-deb -f says\n%s\nwant\n%s", info, want)
	}
	contents := r.run(out, nil, "dpkg-deb", "-c", a)
	for _, want := range []string{"-rwxr-xr-x root/root", "./usr/sbin/ctrld-install", "./usr/sbin/ctrld\n"} {
		if !strings.Contains(contents, want) {
			t.Errorf("dpkg-deb -c lists\n%s\nwithout %q", contents, want)
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(contents), "\n") {
		if f := strings.Fields(l); f[1] != "root/root" {
			t.Errorf("%q is not root's", l)
		}
	}
	lint, code := r.try(out, nil, "lintian", "--fail-on", "error,warning", a)
	if code != 0 || regexp.MustCompile(`(?m)^[EW]: `).MatchString(lint) {
		t.Errorf("lintian exit %d:\n%s", code, lint)
	}

	// Installed in a throwaway root with no token, the postinst says what
	// to do and runs nothing. (Removing it would run the real
	// ctrld-install uninstall on this machine: the lifecycle test does
	// that with a stand-in.)
	root := r.dpkgRoot(t)
	got, code := r.dpkg(root, "-i", a)
	if code != 0 || !strings.Contains(got, "ctrld-install-postinst: ctrld is not provisioned: no "+root+"/etc/ctrld-install/token") {
		t.Errorf("dpkg -i: exit %d\n%s", code, got)
	}
	if !bytes.Equal(r.read(filepath.Join(root, "usr/sbin/ctrld-install")), r.read(r.linux)) {
		t.Error("the installed ctrld-install is not the one packaged")
	}
}

func (r *pkgRig) checkDebLifecycle(t *testing.T, token string) {
	out := filepath.Join(r.dir, "deb-stub")
	stub := filepath.Join(out, "stub")
	r.write(stub, []byte("#!/bin/sh\nprintf '%s\\n' \"$*\" >>\"$DPKG_ROOT/stub.log\"\n"), 0o755)
	deb := filepath.Join(out, "stub.deb")
	r.run(out, nil, "bash", filepath.Join(r.repo, "scripts/deb/build-deb.sh"), "--ctrld-install", stub, "--version", "1.2.3", "--arch", "amd64", "--output", deb)
	root := r.dpkgRoot(t)
	r.write(filepath.Join(root, "etc/ctrld-install/token"), r.read(token), 0o600)
	if got, code := r.dpkg(root, "-i", deb); code != 0 {
		t.Fatalf("dpkg -i: exit %d\n%s", code, got)
	}
	if got, code := r.dpkg(root, "-P", "ctrld-install"); code != 0 {
		t.Fatalf("dpkg -P: exit %d\n%s", code, got)
	}
	calls := strings.Split(strings.TrimSpace(string(r.read(filepath.Join(root, "stub.log")))), "\n")
	want := []string{
		"install --log " + root + "/var/log/ctrld-install.log --token-file " + root + "/etc/ctrld-install/token",
		"uninstall --log " + root + "/var/log/ctrld-install.log",
	}
	if !sameCalls(calls, want...) {
		t.Errorf("ctrld-install ran as\n%s\nwant\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
	for _, gone := range []string{"usr/sbin/ctrld-install", "etc/ctrld-install"} {
		if _, err := os.Lstat(filepath.Join(root, gone)); err == nil {
			t.Errorf("%s is still there after the purge", gone)
		}
	}
}

func (r *pkgRig) checkMSI(t *testing.T, msi string) {
	r.run(r.dir, nil, "bash", filepath.Join(r.repo, "scripts/msi/build-msi.sh"), "--ctrld-install", r.windows, "--ctrld", r.windowsCtrld,
		"--version", "1.2.3-test", "--output", msi)
	tables := r.run(r.dir, nil, "msiinfo", "tables", msi)
	for _, tb := range []string{"CustomAction", "InstallExecuteSequence", "File", "Upgrade"} {
		if !regexp.MustCompile(`(?m)^` + tb + `$`).MatchString(tables) {
			t.Errorf("msiinfo tables lacks %s:\n%s", tb, tables)
		}
	}
	rows := func(table string) map[string][]string {
		m := map[string][]string{}
		for i, l := range strings.Split(r.run(r.dir, nil, "msiinfo", "export", msi, table), "\n") {
			if f := strings.Split(strings.TrimRight(l, "\r"), "\t"); i >= 3 && len(f) > 1 {
				m[f[0]] = f[1:]
			}
		}
		return m
	}
	ca := rows("CustomAction")
	// 18 (an installed executable) + 0x400 deferred + 0x800 no
	// impersonation (system context) + 0x2000 hidden target.
	for _, a := range []string{"ProvisionTokenFile", "ProvisionToken", "ProvisionResolverFile", "ProvisionResolver", "Uninstall", "UninstallPin"} {
		if len(ca[a]) < 3 || ca[a][0] != "11282" || ca[a][1] != "ctrld_install.exe" {
			t.Errorf("custom action %s is %q, want type 11282 running ctrld_install.exe", a, ca[a])
		}
	}
	if got := ca["ProvisionTokenFile"]; len(got) < 3 || !strings.HasPrefix(got[2], `install --exit-profile intune --log "[INSTALLDIR]ctrld-install.log" --token-file "[CTRLD_TOKEN_FILE]"`) {
		t.Errorf("ProvisionTokenFile runs %q", got)
	}
	if got := ca["HomeACL"]; len(got) < 3 || !strings.Contains(got[2], "/inheritance:r /grant:r *S-1-5-32-544:(OI)(CI)F *S-1-5-18:(OI)(CI)F") {
		t.Errorf("HomeACL runs %q", got)
	}
	seq := map[string]int{}
	for a, f := range rows("InstallExecuteSequence") {
		n, _ := strconv.Atoi(f[len(f)-1])
		seq[a] = n
	}
	// The old version goes last, after the new one's provisioning, in the
	// same transaction; ctrld's service is stopped around the files.
	order := []string{"InstallInitialize", "StopServices", "Uninstall", "UninstallPin", "RemoveFiles", "CreateFolders", "HomeReset", "HomeACL",
		"HomeOwner", "HomeChildren", "InstallFiles", "StartServices", "PublishProduct", "ProvisionTokenFile", "ProvisionToken",
		"ProvisionResolverFile", "ProvisionResolver", "InstallExecute", "RemoveExistingProducts", "InstallFinalize"}
	for i := 1; i < len(order); i++ {
		if seq[order[i-1]] == 0 || seq[order[i-1]] >= seq[order[i]] {
			t.Errorf("%s (%d) does not come before %s (%d)", order[i-1], seq[order[i-1]], order[i], seq[order[i]])
		}
	}
	conds := rows("InstallExecuteSequence")
	for _, a := range []string{"Uninstall", "UninstallPin"} {
		if got := conds[a]; len(got) == 0 || !strings.HasPrefix(got[0], `REMOVE~="ALL" AND NOT UPGRADINGPRODUCTCODE AND $Installer=2 AND `) {
			t.Errorf("%s runs when %q, want at a removal that no upgrade makes", a, got)
		}
	}
	for table, want := range map[string]map[string]string{
		"ServiceControl": {"CtrldService": "ctrld\t3\t\t1\tService"},
		"RegLocator":     {"CtrldServiceKey": `2	SYSTEM\CurrentControlSet\Services\ctrld	ImagePath	18`},
		"Component":      {"Service": "{6B1E2F0A-93C4-4D1E-8F57-2A9C0E4B7D13}\tINSTALLDIR\t256\tCTRLD_SERVICE\t"},
	} {
		got := rows(table)
		for k, v := range want {
			if strings.Join(got[k], "\t") != v {
				t.Errorf("%s row %s is %q, want %q", table, k, strings.Join(got[k], "\t"), v)
			}
		}
	}
	for f, row := range rows("File") {
		if len(row) < 5 || row[3] != "1.2.3.0" {
			t.Errorf("file %s is %q, want version 1.2.3.0, so that an upgrade replaces it", f, row)
		}
	}
	props := rows("Property")
	for k, v := range map[string]string{"MsiHiddenProperties": "CTRLD_TOKEN;CTRLD_RESOLVER", "ProductVersion": "1.2.3", "ProductName": "ctrld-install", "ROOTDRIVE": `C:\`} {
		if got := props[k]; len(got) == 0 || got[0] != v {
			t.Errorf("property %s is %q, want %q", k, got, v)
		}
	}
	x := filepath.Join(r.dir, "msiextract")
	listed := r.run(r.dir, nil, "msiextract", "-C", x, msi)
	for _, f := range []string{"ControlD/ctrld-install.exe", "ControlD/ctrld.exe"} {
		if !strings.Contains(listed, f) {
			t.Errorf("msiextract lists\n%s\nwithout %s", listed, f)
		}
	}
	if !bytes.Equal(r.read(filepath.Join(x, "ControlD/ctrld-install.exe")), r.read(r.windows)) {
		t.Error("the MSI's ctrld-install.exe is not the one given")
	}
}

// checkMSIUnderWine installs and removes the MSI with Wine's msiexec in a
// prefix of its own, the stand-in ctrld registering a real service.
func (r *pkgRig) checkMSIUnderWine(t *testing.T, msi, token string) {
	w := r.newWineRig(t, "install")
	home := w.home
	script := func(startExit int) {
		r.write(filepath.Join(home, "ctrld.script.json"), []byte(fmt.Sprintf(`{"version":"1.5.0",
"start":{"service":"install","record":%q,"stdout":["Starting service"],"exit":%d},
"status":{"service":"running","stdout":["Service is running"],"exit":0},
"uninstall":{"service":"remove","stdout":["Service uninstalled"],"exit":0}}`, winPath(filepath.Join(r.dir, "events.jsonl")), startExit)), 0o644)
	}
	msiexec := func(logName string, args ...string) (string, int, string) {
		t.Helper()
		return w.msiexec(t, logName, args...)
	}
	noToken := func(what, s string) {
		t.Helper()
		if strings.Contains(s, pkgCanary) || strings.Contains(s, pkgCanary[:12]) {
			t.Errorf("%s holds the token", what)
		}
	}
	installed := func() bool { return len(w.products(t)) > 0 }

	// The token in a file: the log holds no byte of it.
	script(0)
	out, code, log := msiexec("install.log", "/i", winPath(msi), "CTRLD_TOKEN_FILE="+winPath(token))
	noToken("the verbose log", log)
	noToken("msiexec's output", out)
	if code != 0 {
		t.Fatalf("msiexec /i exited %d, want 0\n%s\n%s", code, out, log)
	}
	if !strings.Contains(log, "ProvisionTokenFile") || strings.Contains(log, "--token-file") {
		t.Errorf("the log does not show the action ProvisionTokenFile, or shows its command line:\n%s", log)
	}
	for _, f := range []string{"ctrld-install.exe", "ctrld.exe"} {
		if _, err := os.Stat(filepath.Join(home, f)); err != nil {
			t.Errorf("C:\\ControlD\\%s was not installed: %v", f, err)
		}
	}
	if !installed() {
		t.Error("Programs and Features does not list ctrld-install")
	}
	own := string(r.read(filepath.Join(home, "ctrld-install.log")))
	if !strings.Contains(own, "command install, exit profile intune") || !strings.Contains(own, "provisioning succeeded (exit 0)") {
		t.Errorf("ctrld-install's log:\n%s", own)
	}
	if ev := string(r.read(filepath.Join(r.dir, "events.jsonl"))); !strings.Contains(ev, `"--cd-org","`+pkgCanary+`"`) {
		t.Errorf("ctrld start did not get the token:\n%s", ev)
	}

	out, code, log = msiexec("uninstall.log", "/x", winPath(msi))
	if code != 0 {
		t.Fatalf("msiexec /x exited %d, want 0\n%s\n%s", code, out, log)
	}
	if _, err := os.Stat(filepath.Join(home, "ctrld-install.exe")); err == nil {
		t.Error("ctrld-install.exe is still there after the removal")
	}
	if installed() {
		t.Error("Programs and Features still lists ctrld-install")
	}
	if own := string(r.read(filepath.Join(home, "ctrld-install.log"))); !strings.Contains(own, "uninstall succeeded (exit 0)") {
		t.Errorf("ctrld-install's log after the removal:\n%s", own)
	}

	// The token as a property: ctrld-install gets it, and the only line of
	// the log that holds it is Wine's dump of every property at the end,
	// which ignores MsiHiddenProperties (Windows writes stars there).
	out, code, log = msiexec("install-property.log", "/i", winPath(msi), "CTRLD_TOKEN="+pkgCanary)
	if code != 0 {
		t.Fatalf("msiexec /i CTRLD_TOKEN=... exited %d, want 0\n%s", code, out)
	}
	noToken("msiexec's output", out)
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, pkgCanary) && !strings.HasPrefix(l, "Property(S): CTRLD_TOKEN = ") {
			t.Errorf("the verbose log shows the token outside Wine's property dump: %q", l)
		}
	}
	if _, code, _ = msiexec("uninstall-property.log", "/x", winPath(msi)); code != 0 {
		t.Fatalf("msiexec /x exited %d", code)
	}

	// A fatal failure (ctrld start fails with no result file:
	// CTRLD_FAILED_UNCLASSIFIED) fails the installation and rolls the files
	// back; the code stays in ctrld-install's log. Windows' msiexec ends
	// such an installation with 1603 (ERROR_INSTALL_FAILURE); Wine's with
	// 1627 (ERROR_FUNCTION_FAILED), which reaches Unix as its low 8 bits.
	script(1)
	out, code, _ = msiexec("install-fail.log", "/i", winPath(msi), "CTRLD_TOKEN_FILE="+winPath(token))
	if code != 1627&0xff {
		t.Errorf("a failed provisioning: msiexec exited %d, want Wine's 1627 & 0xff = %d\n%s", code, 1627&0xff, out)
	}
	if _, err := os.Stat(filepath.Join(home, "ctrld-install.exe")); err == nil {
		t.Error("ctrld-install.exe stayed after the failed installation was rolled back")
	}
	if installed() {
		t.Error("Programs and Features lists ctrld-install after a failed installation")
	}
	if own := string(r.read(filepath.Join(home, "ctrld-install.log"))); !strings.Contains(own, "code=CTRLD_FAILED_UNCLASSIFIED (exit 65)") {
		t.Errorf("ctrld-install's log after the failure:\n%s", own)
	}
}
