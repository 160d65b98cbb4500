// Package scripts holds the tests of the release script; the MDM scripts
// beside it are tested through the built binary in cmd/ctrld-install.
package scripts

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// fullEnv asks for the release tests that build every target twice and
// build from a source export: too slow for every go test ./..., which
// builds the host's binary once (TestReleaseSmoke). CI runs them:
//
//	CTRLD_INSTALL_RELEASE_FULL=1 go test -count=1 -run '^TestRelease' ./scripts/
const fullEnv = "CTRLD_INSTALL_RELEASE_FULL"

func needFull(t *testing.T) {
	t.Helper()
	if testing.Short() || os.Getenv(fullEnv) != "1" {
		t.Skipf("builds the release; %s=1 runs it", fullEnv)
	}
}

const testVersion = "1.2.3-test"

// releaseRig is what a release test needs: bash, git, and this checkout's
// HEAD, resolved once so that a commit landing meanwhile cannot make two
// builds differ.
type releaseRig struct {
	t      *testing.T
	script string
	repo   string
	head   string
	env    []string // added to the script's environment
}

func newRig(t *testing.T) *releaseRig {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the release script runs on Linux and macOS")
	}
	for _, c := range []string{"bash", "git", "go", "tar"} {
		if _, err := exec.LookPath(c); err != nil {
			t.Skipf("no %s here", c)
		}
	}
	script, err := filepath.Abs("release.sh")
	if err != nil {
		t.Fatal(err)
	}
	repo := filepath.Dir(filepath.Dir(script))
	out, err := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not a git checkout")
	}
	return &releaseRig{t: t, script: script, repo: repo, head: strings.TrimSpace(string(out))}
}

type scriptResult struct {
	stdout, stderr string
	exit           int
}

func (r *releaseRig) run(dir string, args ...string) scriptResult {
	r.t.Helper()
	cmd := exec.Command("bash", append([]string{r.script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), r.env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := scriptResult{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		res.exit = ee.ExitCode()
	} else if err != nil {
		r.t.Fatalf("bash %s: %v", r.script, err)
	}
	return res
}

func (r *releaseRig) release(out string, targets []string, extra ...string) {
	r.t.Helper()
	args := append([]string{"--out", out, "--ref", r.head, "--version", testVersion, "--targets", strings.Join(targets, " ")}, extra...)
	res := r.run(r.repo, args...)
	if res.exit != 0 {
		r.t.Fatalf("release.sh %s: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), res.exit, res.stdout, res.stderr)
	}
}

// hostTarget is the target whose binary runs here.
func hostTarget() string { return runtime.GOOS + "/" + runtime.GOARCH }

// allTargets are the release's targets, as release.sh builds them by default.
var allTargets = []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64", "windows/amd64", "windows/arm64"}

func binaryName(target string) string {
	goos, goarch, _ := strings.Cut(target, "/")
	n := fmt.Sprintf("ctrld-install_%s_%s_%s", testVersion, goos, goarch)
	if goos == "windows" {
		n += ".exe"
	}
	return n
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

// One release of the host's binary, as every go test ./... builds it: the
// files a release promises, checksums, stripped static trimmed binaries and
// the version and commit stamped in. The full tests build every target.
func TestReleaseSmoke(t *testing.T) {
	needFull(t)
	t.Parallel()
	r := newRig(t)
	out := filepath.Join(t.TempDir(), "out")
	targets := []string{hostTarget()}
	// The packages need dpkg-deb; the full tests build them.
	r.release(out, targets, "--packages", "")
	files := readDir(t, out)
	want := []string{"SHA256SUMS", binaryName(hostTarget())}
	if got := keys(files); !sameElements(got, want) {
		t.Errorf("release holds %q, want %q", sorted(got), sorted(want))
	}
	r.checkRelease(t, out, files, targets)
}

// Two builds of one commit are byte-identical, and what they hold is what
// a release promises: every binary, a universal macOS binary made of the
// two thin ones, checksums, the version and commit stamped in.
func TestReleaseBuildsAreReproducible(t *testing.T) {
	needFull(t)
	r := newRig(t)
	targets := allTargets
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	r.release(a, targets)
	r.release(b, targets)

	first, second := readDir(t, a), readDir(t, b)
	want := []string{"SHA256SUMS", "ctrld-install_" + testVersion + "_darwin_universal"}
	// The packages, each from its binaries.
	for _, p := range []string{"darwin_universal.pkg", "darwin_uninstall.pkg", "linux_amd64.deb", "linux_arm64.deb"} {
		want = append(want, "ctrld-install_"+testVersion+"_"+p)
	}
	for _, tg := range targets {
		want = append(want, binaryName(tg))
	}
	if got := keys(first); !sameElements(got, want) {
		t.Errorf("first release holds %q, want %q", sorted(got), sorted(want))
	}
	if got := keys(second); !sameElements(got, want) {
		t.Errorf("second release holds %q, want %q", sorted(got), sorted(want))
	}
	for name, content := range first {
		if !bytes.Equal(content, second[name]) {
			t.Errorf("%s differs between two builds of one commit", name)
		}
	}
	r.checkRelease(t, a, first, targets)

	t.Run("universal", func(t *testing.T) {
		u := first["ctrld-install_"+testVersion+"_darwin_universal"]
		ff, err := macho.NewFatFile(bytes.NewReader(u))
		if err != nil {
			t.Fatalf("macho.NewFatFile: %v", err)
		}
		defer ff.Close()
		if got, want := len(ff.Arches), 2; got != want {
			t.Fatalf("universal binary has %d slices, want %d", got, want)
		}
		thin := map[macho.Cpu]string{macho.CpuAmd64: "darwin/amd64", macho.CpuArm64: "darwin/arm64"}
		for _, arch := range ff.Arches {
			tg, ok := thin[arch.Cpu]
			if !ok {
				t.Fatalf("unexpected CPU %v", arch.Cpu)
			}
			if !bytes.Equal(u[arch.Offset:arch.Offset+arch.Size], first[binaryName(tg)]) {
				t.Errorf("the %s slice differs from the thin binary %s", tg, binaryName(tg))
			}
			delete(thin, arch.Cpu)
		}
	})
}

// checkRelease checks the release of targets in dir, whose files are files:
// the checksums, each binary's build settings, and the host binary's
// version line.
func (r *releaseRig) checkRelease(t *testing.T, dir string, files map[string][]byte, targets []string) {
	t.Run("checksums", func(t *testing.T) {
		var listed []string
		for _, line := range strings.Split(strings.TrimSuffix(string(files["SHA256SUMS"]), "\n"), "\n") {
			sum, name, ok := strings.Cut(line, "  ")
			if !ok {
				t.Fatalf("SHA256SUMS line %q is not in sha256sum format", line)
			}
			h := sha256.Sum256(files[name])
			if want := hex.EncodeToString(h[:]); sum != want {
				t.Errorf("SHA256SUMS lists %s as %s, want %s", name, sum, want)
			}
			listed = append(listed, name)
		}
		if !slices.IsSorted(listed) {
			t.Errorf("SHA256SUMS lists %v, want them listed in a fixed (sorted) order", listed)
		}
		var want []string
		for name := range files {
			if name != "SHA256SUMS" {
				want = append(want, name)
			}
		}
		if !sameElements(listed, want) {
			t.Errorf("SHA256SUMS lists %q, want %q", sorted(listed), sorted(want))
		}
	})

	t.Run("build settings", func(t *testing.T) {
		for _, tg := range targets {
			bi, err := buildinfo.ReadFile(filepath.Join(dir, binaryName(tg)))
			if err != nil {
				t.Fatalf("%s: buildinfo.ReadFile: %v", tg, err)
			}
			settings := map[string]string{}
			for _, s := range bi.Settings {
				settings[s.Key] = s.Value
			}
			goos, goarch, _ := strings.Cut(tg, "/")
			for _, kv := range [][2]string{{"GOOS", goos}, {"GOARCH", goarch}, {"-trimpath", "true"}, {"CGO_ENABLED", "0"}} {
				if got, want := settings[kv[0]], kv[1]; got != want {
					t.Errorf("%s: build setting %s = %q, want %q", tg, kv[0], got, want)
				}
			}
			if goos == "linux" {
				// -trimpath keeps -ldflags out of the settings; -s shows as
				// the missing symbol table.
				f, err := elf.Open(filepath.Join(dir, binaryName(tg)))
				if err != nil {
					t.Fatal(err)
				}
				if _, err = f.Symbols(); !errors.Is(err, elf.ErrNoSymbols) {
					t.Errorf("%s: Symbols() error = %v, want %v: it must be stripped", tg, err, elf.ErrNoSymbols)
				}
				f.Close()
			}
			if v, ok := settings["vcs.revision"]; ok {
				t.Errorf("%s: build setting vcs.revision = %q, want none: the commit comes from the stamp, not from VCS settings", tg, v)
			}
			if bytes.Contains(files[binaryName(tg)], []byte(r.repo)) {
				t.Errorf("%s holds the path %s of the build machine, want none", tg, r.repo)
			}
		}
	})

	t.Run("version", func(t *testing.T) {
		if !slices.Contains(targets, hostTarget()) {
			t.Skip("the host's binary was not built")
		}
		bin := filepath.Join(dir, binaryName(hostTarget()))
		out, err := exec.Command(bin, "version").Output()
		if err != nil {
			t.Fatalf("%s version: %v", bin, err)
		}
		if got, want := string(out), fmt.Sprintf("ctrld-install %s (commit %s, %s)\n", testVersion, r.head[:12], runtime.Version()); got != want {
			t.Errorf("%s version = %q, want %q", bin, got, want)
		}
	})
}

// A build from a source export (no .git) of a commit is the same bytes as a
// build of that commit from the checkout, given the commit to stamp.
func TestReleaseFromSourceExportMatchesCheckout(t *testing.T) {
	needFull(t)
	r := newRig(t)
	export := t.TempDir()
	if out, err := exec.Command("git", "-C", export, "rev-parse", "--git-dir").CombinedOutput(); err == nil {
		t.Skipf("the temporary directory is inside a git checkout: %s", out)
	}
	target := []string{hostTarget()}
	fromGit := filepath.Join(t.TempDir(), "git")
	r.release(fromGit, target)

	archive := exec.Command("git", "-C", r.repo, "archive", "--format=tar", r.head)
	untar := exec.Command("tar", "-x", "-C", export)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	untar.Stdin = pipe
	if err := archive.Start(); err != nil {
		t.Fatalf("git archive: %v", err)
	}
	if err := untar.Run(); err != nil {
		t.Fatalf("tar -x: %v", err)
	}
	if err := archive.Wait(); err != nil {
		t.Fatalf("git archive: %v", err)
	}
	// The script under test, not the commit's copy of it.
	script, err := os.ReadFile(r.script)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(export, "scripts", "release.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}

	fromExport := filepath.Join(t.TempDir(), "export")
	// The packages' time, which a checkout takes from the commit.
	epoch, err := exec.Command("git", "-C", r.repo, "log", "-1", "--format=%ct", r.head).Output()
	if err != nil {
		t.Fatal(err)
	}
	exported := &releaseRig{t: t, script: filepath.Join(export, "scripts", "release.sh"), repo: export,
		env: []string{"SOURCE_DATE_EPOCH=" + strings.TrimSpace(string(epoch))}}
	res := exported.run(export, "--out", fromExport, "--version", testVersion, "--commit", r.head[:12], "--targets", target[0])
	if res.exit != 0 {
		t.Fatalf("release.sh from the export: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", res.exit, res.stdout, res.stderr)
	}
	if want, got := readDir(t, fromGit), readDir(t, fromExport); !reflect.DeepEqual(got, want) {
		t.Errorf("release from the export differs from the release from the checkout:\n%s", diffFiles(got, want))
	}
}

func TestReleaseRefusesMistakes(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	full := filepath.Join(t.TempDir(), "full")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(full, "old"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	for _, tc := range []struct {
		name string
		args []string
		exit int
		msg  string
	}{
		{"unknown flag", []string{"--bogus"}, 2, "unknown argument --bogus"},
		{"flag without value", []string{"--out"}, 2, "--out needs a value"},
		{"unknown target", []string{"--out", empty, "--targets", "plan9/amd64"}, 2, "unknown target plan9/amd64"},
		{"no target", []string{"--out", empty, "--targets", " "}, 2, "names no target"},
		{"unknown package", []string{"--out", empty, "--packages", "rpm"}, 2, "unknown package rpm"},
		{"unsafe version", []string{"--out", empty, "--version", "1.0 beta"}, 2, "--version may hold only"},
		{"commit in a checkout", []string{"--out", empty, "--commit", "abc"}, 2, "only for builds outside a git checkout"},
		{"not a commit", []string{"--out", empty, "--ref", "no-such-ref-anywhere"}, 1, "is not a commit"},
		{"output not empty", []string{"--out", full}, 1, "is not empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := r.run(r.repo, tc.args...)
			if res.exit != tc.exit {
				t.Errorf("release.sh %q: exit %d, want %d; stderr:\n%s", tc.args, res.exit, tc.exit, res.stderr)
			}
			if !strings.HasPrefix(res.stderr, "release.sh: error: ") {
				t.Errorf("release.sh %q: stderr %q, want it to start with %q", tc.args, res.stderr, "release.sh: error: ")
			}
			if !strings.Contains(res.stderr, tc.msg) {
				t.Errorf("release.sh %q: stderr %q, want it to contain %q", tc.args, res.stderr, tc.msg)
			}
			if res.stdout != "" {
				t.Errorf("release.sh %q: stdout %q, want none", tc.args, res.stdout)
			}
		})
	}
	if fi, err := os.Lstat(empty); err == nil && fi.IsDir() {
		t.Errorf("%s exists: nothing is created before the arguments are known to be good", empty)
	}
	res := r.run(r.repo, "--help")
	if res.exit != 0 {
		t.Errorf("release.sh --help: exit %d, want 0; stderr:\n%s", res.exit, res.stderr)
	}
	if want := "usage: scripts/release.sh"; !strings.Contains(res.stdout, want) {
		t.Errorf("release.sh --help: stdout %q, want it to contain %q", res.stdout, want)
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// sorted returns a sorted copy of s.
func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// sameElements reports whether a and b hold the same elements, each as
// many times, in any order.
func sameElements(a, b []string) bool {
	return slices.Equal(sorted(a), sorted(b))
}

// diffFiles names the files that are missing from, extra in or different
// in got, compared with want.
func diffFiles(got, want map[string][]byte) string {
	var lines []string
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			lines = append(lines, "missing "+name)
		case !reflect.DeepEqual(g, w):
			lines = append(lines, "differs "+name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			lines = append(lines, "extra "+name)
		}
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
