package wineshim

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// fullEnv runs these tests: each needs Wine and mingw, and a prefix takes
// tens of seconds to make. CI runs them:
//
//	CTRLD_INSTALL_WINE_FULL=1 go test -count=1 ./internal/tools/wineshim/
const fullEnv = "CTRLD_INSTALL_WINE_FULL"

func wineBinary() string {
	if w := os.Getenv("WINE"); w != "" {
		return w
	}
	return "/usr/lib/wine/wine64"
}

func needWine(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("drives Wine from the host")
	}
	if os.Getenv(fullEnv) != "1" {
		t.Skipf("needs Wine and mingw and makes a Wine prefix; %s=1 runs it", fullEnv)
	}
	if _, err := os.Stat(wineBinary()); err != nil {
		t.Fatalf("%s=1 but no Wine: %v", fullEnv, err)
	}
}

var (
	prefixOnce sync.Once
	prefixDir  string
	prefixErr  error
	prefixOut  []byte
	scratch    string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if scratch != "" {
		os.RemoveAll(scratch)
	}
	os.Exit(code)
}

// prefix is the one prefix wine-prefix.sh makes for these tests.
func prefix(t *testing.T) string {
	t.Helper()
	prefixOnce.Do(func() {
		scratch, prefixErr = os.MkdirTemp("", "wineshim-test-*")
		if prefixErr != nil {
			return
		}
		prefixDir = filepath.Join(scratch, "prefix")
		prefixOut, prefixErr = exec.Command("./wine-prefix.sh", prefixDir).CombinedOutput()
	})
	if prefixErr != nil {
		t.Fatalf("wine-prefix.sh: %v\n%s", prefixErr, prefixOut)
	}
	return prefixDir
}

func runUnderWine(t *testing.T, prefix, exe string) (string, error) {
	t.Helper()
	c := exec.Command(wineBinary(), exe)
	c.Env = append(os.Environ(), "WINEPREFIX="+prefix, "WINEDEBUG=-all")
	out, err := c.CombinedOutput()
	return string(out), err
}

// A Go program runs in the prefix and gets random bytes; without the DLL
// it does not start at all, so the DLL is what makes the difference.
func TestWinePrefixRunsGo(t *testing.T) {
	needWine(t)
	p := prefix(t)
	exe := filepath.Join(t.TempDir(), "rand.exe")
	build := exec.Command("go", "build", "-o", exe, "./testdata/rand")
	build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	hex := regexp.MustCompile(`^[0-9a-f]{64}\r?\n$`)
	var seen []string
	for range 2 {
		out, err := runUnderWine(t, p, exe)
		if err != nil || !hex.MatchString(out) {
			t.Fatalf("rand.exe under Wine: %v\n%s", err, out)
		}
		seen = append(seen, out)
	}
	if seen[0] == seen[1] {
		t.Errorf("two runs printed the same bytes %q: ProcessPrng filled nothing", seen[0])
	}

	dll := filepath.Join(p, "drive_c", "windows", "system32", "bcryptprimitives.dll")
	saved, err := os.ReadFile(dll)
	if err != nil {
		t.Fatalf("wine-prefix.sh put no DLL in system32: %v", err)
	}
	if err := os.Remove(dll); err != nil {
		t.Fatal(err)
	}
	out, err := runUnderWine(t, p, exe)
	if werr := os.WriteFile(dll, saved, 0o755); werr != nil {
		t.Fatal(werr)
	}
	if err == nil || !strings.Contains(out, "bcryptprimitives.dll") {
		t.Errorf("without the DLL rand.exe ran (%v):\n%s\nwant Go's fatal error naming bcryptprimitives.dll", err, out)
	}
}

// wine-tests.sh runs each package's binary in its directory, reports the
// skips, and fails when one package fails.
func TestWineTestsScript(t *testing.T) {
	needWine(t)
	p := prefix(t)
	run := func(pkgs ...string) (string, error) {
		args := append([]string{p, t.TempDir()}, pkgs...)
		out, err := exec.Command("./wine-tests.sh", args...).CombinedOutput()
		return string(out), err
	}
	const here = "github.com/Control-D-Inc/ctrld-install/internal/tools/wineshim/testdata/"
	out, err := run("./internal/tools/wineshim/testdata/passes")
	if err != nil || !strings.Contains(out, "ok   "+here+"passes") {
		t.Errorf("wine-tests.sh passes: %v\n%s", err, out)
	}
	if want := "skip TestSkipped: a reason wine-tests.sh prints"; !strings.Contains(out, want) {
		t.Errorf("wine-tests.sh passes printed:\n%s\nwant the line %q", out, want)
	}
	out, err = run("./internal/tools/wineshim/testdata/passes", "./internal/tools/wineshim/testdata/fails")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("wine-tests.sh with a failing package: %v, want exit status 1\n%s", err, out)
	}
	for _, want := range []string{"ok   " + here + "passes", "FAIL " + here + "fails", "the failure wine-tests.sh must report"} {
		if !strings.Contains(out, want) {
			t.Errorf("wine-tests.sh with a failing package printed:\n%s\nwant %q", out, want)
		}
	}
}
