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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
		t.Skipf("builds the release twice; %s=1 runs it", fullEnv)
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
	require.NoError(t, err)
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
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	res := scriptResult{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		res.exit = ee.ExitCode()
	} else {
		require.NoError(r.t, err)
	}
	return res
}

func (r *releaseRig) release(out string, targets []string, extra ...string) {
	r.t.Helper()
	args := append([]string{"--out", out, "--ref", r.head, "--version", testVersion, "--targets", strings.Join(targets, " ")}, extra...)
	res := r.run(r.repo, args...)
	require.Equal(r.t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
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
	require.NoError(t, err)
	files := map[string][]byte{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		files[e.Name()] = b
	}
	return files
}

// One release of the host's binary, as every go test ./... builds it: the
// files a release promises, checksums, stripped static trimmed binaries and
// the version and commit stamped in. The full tests build every target.
func TestReleaseSmoke(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the release")
	}
	r := newRig(t)
	out := filepath.Join(t.TempDir(), "out")
	targets := []string{hostTarget()}
	r.release(out, targets)
	files := readDir(t, out)
	want := []string{"SHA256SUMS", binaryName(hostTarget())}
	assert.ElementsMatch(t, want, keys(files))
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
	for _, tg := range targets {
		want = append(want, binaryName(tg))
	}
	assert.ElementsMatch(t, want, keys(first))
	assert.ElementsMatch(t, want, keys(second))
	for name, content := range first {
		assert.True(t, bytes.Equal(content, second[name]), "%s differs between two builds of one commit", name)
	}
	r.checkRelease(t, a, first, targets)

	t.Run("universal", func(t *testing.T) {
		u := first["ctrld-install_"+testVersion+"_darwin_universal"]
		ff, err := macho.NewFatFile(bytes.NewReader(u))
		require.NoError(t, err)
		defer ff.Close()
		require.Len(t, ff.Arches, 2)
		thin := map[macho.Cpu]string{macho.CpuAmd64: "darwin/amd64", macho.CpuArm64: "darwin/arm64"}
		for _, arch := range ff.Arches {
			tg, ok := thin[arch.Cpu]
			require.True(t, ok, "unexpected CPU %v", arch.Cpu)
			assert.Equal(t, first[binaryName(tg)], u[arch.Offset:arch.Offset+arch.Size], "the %s slice is the thin binary", tg)
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
			require.True(t, ok, "sha256sum format: %q", line)
			h := sha256.Sum256(files[name])
			assert.Equal(t, hex.EncodeToString(h[:]), sum, name)
			listed = append(listed, name)
		}
		assert.True(t, slices.IsSorted(listed), "listed in a fixed order: %v", listed)
		var want []string
		for name := range files {
			if name != "SHA256SUMS" {
				want = append(want, name)
			}
		}
		assert.ElementsMatch(t, want, listed)
	})

	t.Run("build settings", func(t *testing.T) {
		for _, tg := range targets {
			bi, err := buildinfo.ReadFile(filepath.Join(dir, binaryName(tg)))
			require.NoError(t, err, tg)
			settings := map[string]string{}
			for _, s := range bi.Settings {
				settings[s.Key] = s.Value
			}
			goos, goarch, _ := strings.Cut(tg, "/")
			assert.Equal(t, goos, settings["GOOS"], tg)
			assert.Equal(t, goarch, settings["GOARCH"], tg)
			assert.Equal(t, "true", settings["-trimpath"], tg)
			assert.Equal(t, "0", settings["CGO_ENABLED"], tg)
			if goos == "linux" {
				// -trimpath keeps -ldflags out of the settings; -s shows as
				// the missing symbol table.
				f, err := elf.Open(filepath.Join(dir, binaryName(tg)))
				require.NoError(t, err)
				_, err = f.Symbols()
				assert.ErrorIs(t, err, elf.ErrNoSymbols, "%s is stripped", tg)
				f.Close()
			}
			assert.NotContains(t, settings, "vcs.revision", "%s: the commit comes from the stamp, not from VCS settings", tg)
			assert.NotContains(t, string(files[binaryName(tg)]), r.repo, "%s holds no path of the build machine", tg)
		}
	})

	t.Run("version", func(t *testing.T) {
		if !slices.Contains(targets, hostTarget()) {
			t.Skip("the host's binary was not built")
		}
		out, err := exec.Command(filepath.Join(dir, binaryName(hostTarget())), "version").Output()
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("ctrld-install %s (commit %s, %s)\n", testVersion, r.head[:12], runtime.Version()), string(out))
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
	require.NoError(t, err)
	untar.Stdin = pipe
	require.NoError(t, archive.Start())
	require.NoError(t, untar.Run())
	require.NoError(t, archive.Wait())
	// The script under test, not the commit's copy of it.
	script, err := os.ReadFile(r.script)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(export, "scripts", "release.sh"), script, 0o755))

	fromExport := filepath.Join(t.TempDir(), "export")
	exported := &releaseRig{t: t, script: filepath.Join(export, "scripts", "release.sh"), repo: export}
	res := exported.run(export, "--out", fromExport, "--version", testVersion, "--commit", r.head[:12], "--targets", target[0])
	require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
	assert.Equal(t, readDir(t, fromGit), readDir(t, fromExport))
}

func TestReleaseRefusesMistakes(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	full := filepath.Join(t.TempDir(), "full")
	require.NoError(t, os.MkdirAll(full, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(full, "old"), nil, 0o644))
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
		{"unsafe version", []string{"--out", empty, "--version", "1.0 beta"}, 2, "--version may hold only"},
		{"commit in a checkout", []string{"--out", empty, "--commit", "abc"}, 2, "only for builds outside a git checkout"},
		{"not a commit", []string{"--out", empty, "--ref", "no-such-ref-anywhere"}, 1, "is not a commit"},
		{"output not empty", []string{"--out", full}, 1, "is not empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := r.run(r.repo, tc.args...)
			assert.Equal(t, tc.exit, res.exit, res.stderr)
			assert.True(t, strings.HasPrefix(res.stderr, "release.sh: error: "), res.stderr)
			assert.Contains(t, res.stderr, tc.msg)
			assert.Empty(t, res.stdout)
		})
	}
	assert.NoDirExists(t, empty, "nothing is created before the arguments are known to be good")
	res := r.run(r.repo, "--help")
	assert.Equal(t, 0, res.exit)
	assert.Contains(t, res.stdout, "usage: scripts/release.sh")
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
