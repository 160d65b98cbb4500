package scripts

// The packages' scripts, run as their package managers run them, against
// a stub ctrld-install that records its arguments: the .deb's maintainer
// scripts, the uninstall package's postinstall, and build-pkg.sh's signing
// check. packages_full_test.go builds the packages themselves.

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// stubRig is a throwaway root with a stub ctrld-install at bin that
// appends its arguments to calls and exits with the content of the file
// exitFile (0 when absent).
type stubRig struct {
	t          *testing.T
	root, bin  string
	calls      string
	exitFile   string
	scriptsDir string
}

const stubScript = `#!/bin/sh
printf '%s\n' "$*" >>"$STUB_CALLS"
if [ -f "$STUB_EXIT" ]; then exit "$(cat "$STUB_EXIT")"; fi
exit 0
`

func newStubRig(t *testing.T, bin string) *stubRig {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("POSIX shell scripts")
	}
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh here")
	}
	root := t.TempDir()
	r := &stubRig{t: t, root: root, bin: filepath.Join(root, bin), calls: filepath.Join(root, "calls"),
		exitFile: filepath.Join(root, "stub-exit")}
	r.write(bin, stubScript, 0o755)
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	r.scriptsDir = here
	return r
}

func (r *stubRig) write(rel, content string, mode os.FileMode) {
	r.t.Helper()
	p := filepath.Join(r.root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		r.t.Fatal(err)
	}
}

func (r *stubRig) exits(code string) { r.write("stub-exit", code, 0o644) }

// run runs script (a path under scripts/) with args and env and returns
// its combined output and exit status.
func (r *stubRig) run(script string, env []string, args ...string) (string, int) {
	r.t.Helper()
	c := exec.Command("sh", append([]string{filepath.Join(r.scriptsDir, script)}, args...)...)
	c.Env = append(os.Environ(), "STUB_CALLS="+r.calls, "STUB_EXIT="+r.exitFile)
	c.Env = append(c.Env, env...)
	out, err := c.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		r.t.Fatal(err)
	}
	return string(out), code
}

func (r *stubRig) called() []string {
	b, err := os.ReadFile(r.calls)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		r.t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func (r *stubRig) exists(rel string) bool {
	_, err := os.Lstat(filepath.Join(r.root, rel))
	return err == nil
}

func sameCalls(got []string, want ...string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}

func TestDebPostinst(t *testing.T) {
	t.Parallel()
	t.Run("no token says what to do", func(t *testing.T) {
		r := newStubRig(t, "usr/sbin/ctrld-install")
		out, code := r.run("deb/postinst.sh", []string{"DPKG_ROOT=" + r.root}, "configure", "")
		if code != 0 || !strings.Contains(out, "ctrld-install-postinst: ctrld is not provisioned: no "+r.root+"/etc/ctrld-install/token. Put the provisioning token there") {
			t.Errorf("exit %d:\n%s", code, out)
		}
		if c := r.called(); c != nil {
			t.Errorf("ctrld-install ran: %q", c)
		}
	})
	t.Run("token file", func(t *testing.T) {
		r := newStubRig(t, "usr/sbin/ctrld-install")
		r.write("etc/ctrld-install/token", "SECRET\n", 0o600)
		r.write("etc/ctrld-install/start-flags", "--custom-hostname 'x*' --intercept-mode dns\n", 0o600)
		out, code := r.run("deb/postinst.sh", []string{"DPKG_ROOT=" + r.root}, "configure", "1.0.0")
		want := "install --log " + r.root + "/var/log/ctrld-install.log --token-file " + r.root + "/etc/ctrld-install/token -- --custom-hostname 'x*' --intercept-mode dns"
		if code != 0 || !sameCalls(r.called(), want) {
			t.Errorf("exit %d, calls %q, want %q\n%s", code, r.called(), want, out)
		}
		if strings.Contains(out, "SECRET") {
			t.Errorf("the token was printed:\n%s", out)
		}
	})
	t.Run("resolver file", func(t *testing.T) {
		r := newStubRig(t, "usr/sbin/ctrld-install")
		r.write("etc/ctrld-install/resolver", "abc\n", 0o600)
		_, code := r.run("deb/postinst.sh", []string{"DPKG_ROOT=" + r.root}, "configure", "")
		want := "install --log " + r.root + "/var/log/ctrld-install.log --resolver-file " + r.root + "/etc/ctrld-install/resolver"
		if code != 0 || !sameCalls(r.called(), want) {
			t.Errorf("exit %d, calls %q, want %q", code, r.called(), want)
		}
	})
	t.Run("a failed provisioning keeps the package", func(t *testing.T) {
		r := newStubRig(t, "usr/sbin/ctrld-install")
		r.write("etc/ctrld-install/token", "SECRET\n", 0o600)
		r.exits("41")
		out, code := r.run("deb/postinst.sh", []string{"DPKG_ROOT=" + r.root}, "configure", "")
		if code != 0 || !strings.Contains(out, "provisioning ended with exit 41; the package stays installed") {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})
	t.Run("other actions do nothing", func(t *testing.T) {
		r := newStubRig(t, "usr/sbin/ctrld-install")
		r.write("etc/ctrld-install/token", "SECRET\n", 0o600)
		for _, a := range []string{"abort-upgrade", "abort-remove", "triggered"} {
			if _, code := r.run("deb/postinst.sh", []string{"DPKG_ROOT=" + r.root}, a, "1.0.0"); code != 0 {
				t.Errorf("%s: exit %d", a, code)
			}
		}
		if c := r.called(); c != nil {
			t.Errorf("ctrld-install ran: %q", c)
		}
	})
}

func TestDebPrermAndPostrm(t *testing.T) {
	t.Parallel()
	t.Run("removal uninstalls", func(t *testing.T) {
		r := newStubRig(t, "usr/sbin/ctrld-install")
		r.write("etc/ctrld-install/deactivation_pin", "1234\n", 0o600)
		_, code := r.run("deb/prerm.sh", []string{"DPKG_ROOT=" + r.root}, "remove")
		want := "uninstall --log " + r.root + "/var/log/ctrld-install.log --pin-file " + r.root + "/etc/ctrld-install/deactivation_pin"
		if code != 0 || !sameCalls(r.called(), want) {
			t.Errorf("exit %d, calls %q, want %q", code, r.called(), want)
		}
	})
	t.Run("a failed removal keeps the package", func(t *testing.T) {
		r := newStubRig(t, "usr/sbin/ctrld-install")
		r.exits("126")
		out, code := r.run("deb/prerm.sh", []string{"DPKG_ROOT=" + r.root}, "remove")
		if code != 1 || !strings.Contains(out, "ctrld-install-prerm: error: ctrld could not be removed (exit 126), so the package stays") {
			t.Errorf("exit %d, want 1:\n%s", code, out)
		}
	})
	t.Run("an upgrade keeps ctrld", func(t *testing.T) {
		r := newStubRig(t, "usr/sbin/ctrld-install")
		for _, a := range []string{"upgrade", "deconfigure", "failed-upgrade"} {
			if _, code := r.run("deb/prerm.sh", []string{"DPKG_ROOT=" + r.root}, a, "2.0.0"); code != 0 {
				t.Errorf("%s: exit %d", a, code)
			}
		}
		if c := r.called(); c != nil {
			t.Errorf("ctrld-install ran: %q", c)
		}
	})
	t.Run("purge deletes the secrets", func(t *testing.T) {
		r := newStubRig(t, "usr/sbin/ctrld-install")
		r.write("etc/ctrld-install/token", "SECRET\n", 0o600)
		r.write("var/log/ctrld-install.log", "x\n", 0o600)
		if _, code := r.run("deb/postrm.sh", []string{"DPKG_ROOT=" + r.root}, "remove"); code != 0 || !r.exists("etc/ctrld-install/token") {
			t.Errorf("remove: exit %d, the token must stay until a purge", code)
		}
		if _, code := r.run("deb/postrm.sh", []string{"DPKG_ROOT=" + r.root}, "purge"); code != 0 || r.exists("etc/ctrld-install") || r.exists("var/log/ctrld-install.log") {
			t.Errorf("purge: exit %d, /etc/ctrld-install or the log is still there", code)
		}
	})
}

// The uninstall package's postinstall, as Installer runs it: $1 the
// package, $2 the install location, $3 the target volume.
func TestPkgUninstallPostinstall(t *testing.T) {
	t.Parallel()
	env := func(r *stubRig) []string {
		return []string{"CTRLD_INSTALL_BIN=" + r.bin, "CTRLD_INSTALL_CTRLD=" + filepath.Join(r.root, "ctrld"),
			"CTRLD_INSTALL_LOG=" + filepath.Join(r.root, "log"), "PATH=" + r.root + ":" + os.Getenv("PATH")}
	}
	t.Run("success removes the binaries and the receipt", func(t *testing.T) {
		r := newStubRig(t, "ctrld-install")
		r.write("ctrld", "", 0o755)
		r.write("pkgutil", "#!/bin/sh\nprintf 'pkgutil %s\\n' \"$*\" >>\"$STUB_CALLS\"\n", 0o755)
		_, code := r.run("pkg/uninstall-postinstall.sh", env(r), "/tmp/x.pkg", "/", "/")
		want := []string{"uninstall --ctrld " + filepath.Join(r.root, "ctrld") + " --log " + filepath.Join(r.root, "log"), "pkgutil --forget com.controld.ctrld"}
		if code != 0 || !sameCalls(r.called(), want...) {
			t.Errorf("exit %d, calls %q, want %q", code, r.called(), want)
		}
		if r.exists("ctrld-install") || r.exists("ctrld") {
			t.Error("the binaries are still there")
		}
	})
	t.Run("a PIN in the package", func(t *testing.T) {
		r := newStubRig(t, "ctrld-install")
		dir := t.TempDir()
		script, err := os.ReadFile(filepath.Join(r.scriptsDir, "pkg", "uninstall-postinstall.sh"))
		if err != nil {
			t.Fatal(err)
		}
		// Installer runs the script from the package's scripts directory,
		// with the PIN beside it.
		if err := os.WriteFile(filepath.Join(dir, "postinstall"), script, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "deactivation_pin"), []byte("1234\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		c := exec.Command(filepath.Join(dir, "postinstall"), "/tmp/x.pkg", "/", "/")
		c.Env = append(os.Environ(), append(env(r), "STUB_CALLS="+r.calls, "STUB_EXIT="+r.exitFile)...)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		want := "uninstall --ctrld " + filepath.Join(r.root, "ctrld") + " --log " + filepath.Join(r.root, "log") + " --pin-file " + filepath.Join(dir, "deactivation_pin")
		if !sameCalls(r.called(), want) {
			t.Errorf("calls %q, want %q", r.called(), want)
		}
	})
	t.Run("failure keeps everything", func(t *testing.T) {
		r := newStubRig(t, "ctrld-install")
		r.exits("126")
		_, code := r.run("pkg/uninstall-postinstall.sh", env(r), "/tmp/x.pkg", "/", "/")
		if code != 126 || !r.exists("ctrld-install") {
			t.Errorf("exit %d, want 126 with ctrld-install kept", code)
		}
	})
	t.Run("another volume is refused", func(t *testing.T) {
		r := newStubRig(t, "ctrld-install")
		out, code := r.run("pkg/uninstall-postinstall.sh", env(r), "/tmp/x.pkg", "/", "/Volumes/Other")
		if code != 61 || r.called() != nil || !strings.Contains(out, "not the startup disk") {
			t.Errorf("exit %d, calls %q:\n%s", code, r.called(), out)
		}
	})
}

// build-pkg.sh --sign refuses binaries that are not Developer ID signed
// with the hardened runtime, asking codesign (a stand-in here, printing
// what the real one prints).
func TestBuildPkgSignRefusesUnhardenedBinaries(t *testing.T) {
	t.Parallel()
	const good = `Executable=%s
Identifier=ctrld-install
Format=Mach-O universal (x86_64 arm64)
CodeDirectory v=20500 size=1234 flags=0x10000(runtime) hashes=30+7 location=embedded
Authority=Developer ID Application: Example Inc (TEAMID1234)
Authority=Developer ID Certification Authority
Authority=Apple Root CA
Timestamp=2 Dec 2026 at 10:00:00
TeamIdentifier=TEAMID1234
`
	for name, tc := range map[string]struct {
		out    string
		status int
		want   string
	}{
		"hardened and Developer ID": {good, 0, "pkgbuild and productbuild are only on macOS"},
		"no hardened runtime":       {strings.Replace(good, "flags=0x10000(runtime)", "flags=0x0(none)", 1), 0, "is not signed with the hardened runtime"},
		"not Developer ID":          {strings.Replace(good, "Developer ID Application", "Apple Development", 1), 0, "is not signed with a Developer ID Application certificate"},
		"no timestamp":              {strings.Replace(good, "Timestamp=2 Dec 2026 at 10:00:00\n", "", 1), 0, "has no secure timestamp"},
		"unsigned":                  {"%s: code object is not signed at all\n", 1, "is not signed"},
	} {
		t.Run(name, func(t *testing.T) {
			r := newStubRig(t, "ctrld-install")
			r.write("ctrld", "x", 0o755)
			// codesign prints its report on stderr.
			r.write("bin/codesign", "#!/bin/sh\nfor last; do :; done\nprintf '"+strings.ReplaceAll(tc.out, "\n", "\\n")+"' \"$last\" >&2\nexit "+map[bool]string{true: "0", false: "1"}[tc.status == 0]+"\n", 0o755)
			out, code := r.run("pkg/build-pkg.sh", []string{"PATH=" + filepath.Join(r.root, "bin") + ":" + os.Getenv("PATH")},
				"--ctrld", filepath.Join(r.root, "ctrld"), "--ctrld-install", r.bin, "--version", "1.0.0", "--payload-only",
				"--sign", "Developer ID Installer: Example Inc (TEAMID1234)")
			if code != 1 || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, want 1 and %q:\n%s", code, tc.want, out)
			}
		})
	}
}
