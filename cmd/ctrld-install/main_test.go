//go:build unix

package main

// TestMain for every test of the command, and the testscript scripts in
// testdata/script: the command line's observable contract, as golden
// transcripts run against the built binary and the one stand-in for ctrld.

import (
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/Control-D-Inc/ctrld-install/internal/standin"
	_ "github.com/Control-D-Inc/ctrld-install/internal/standin/extra" // the test-only behaviours
	"github.com/Control-D-Inc/ctrld-install/internal/testflags"
)

// installerBin is the ctrld-install binary built once for the package;
// defaultRoot holds every default path it uses; standinMaster is the
// stand-in every test links into its own directory.
var installerBin, defaultRoot, standinMaster string

func TestMain(m *testing.M) {
	// The stand-in first: testscript's own dispatch would rewrite argv[0],
	// and the stand-in records its argv as ctrld-install ran it.
	if standin.IsFake() {
		os.Exit(standin.Main())
	}
	// The registered ctrld puts the stand-in on the scripts' PATH; Setup
	// points it at the script's stand-in script.
	testscript.Main(suite{m}, map[string]func(){
		standin.Name: func() { os.Exit(standin.Main()) },
	})
}

// suite builds what every test uses before any test runs, so that no
// executable is written while another test forks (golang/go#22315).
type suite struct{ m *testing.M }

func (s suite) Run() int {
	// Under nohup SIGHUP is ignored, and the binaries the tests start
	// would inherit that: the hangup tests would test nohup. A signal
	// handled here is the default again in a child (exec resets it).
	if signal.Ignored(syscall.SIGHUP) {
		signal.Notify(make(chan os.Signal, 1), syscall.SIGHUP)
	}
	dir, err := os.MkdirTemp("", "ctrld-install-e2e-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "bin")
	installerBin = filepath.Join(bin, "ctrld-install")
	// Every default path of the binary under test lies in a temporary
	// directory: a test that forgets --home cannot touch the real machine.
	defaultRoot = filepath.Join(dir, "root")
	// The stand-in is its own small binary, not this test binary: the
	// suite starts it a thousand times, and a test binary's size and
	// start-up cost would be most of the suite's time.
	// Built as the release is, static (CGO_ENABLED=0): pflag imports net,
	// which would otherwise link libc, and loading it costs each of the
	// suite's thousand starts about a third more time. Without symbols
	// (-s -w) the link is quicker; nothing here reads them.
	build := exec.Command("go", "build", "-o", bin+string(os.PathSeparator),
		"-ldflags", "-s -w -X github.com/Control-D-Inc/ctrld-install/internal/platform.testRoot="+defaultRoot,
		".", "github.com/Control-D-Inc/ctrld-install/bench/cmd/fakectrld")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building ctrld-install and the stand-in:", err)
		return 1
	}
	master := filepath.Join(dir, "standin")
	err = os.Mkdir(master, 0o755)
	if err == nil {
		standinMaster = filepath.Join(master, standin.Name)
		err = os.Rename(filepath.Join(bin, "fakectrld"), standinMaster)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "preparing the stand-in:", err)
		return 1
	}
	// These tests wait on child processes and time limits.
	testflags.MoreParallel(8)
	return s.m.Run()
}

// The canaries of the scripts, in $TOKEN, $RESOLVER and $PIN: no byte
// ctrld-install prints may hold one.
var scriptCanaries = map[string]string{
	"TOKEN":    canaryToken,
	"RESOLVER": canaryResolver,
	"PIN":      "9081726354", // a deactivation PIN is digits only
}

var update = flag.Bool("update", false, "rewrite the cmp goldens of testdata/script with what ctrld-install printed")

// TestCLI runs testdata/script/*.txtar. Besides testscript's own
// commands, a script has:
//
//	ctrld-install ARGS...  runs the built binary (see runInstallerCmd)
//	exitcode N             the last ctrld-install exited with status N
//	standin-script FILE    $WORK/bin/ctrld is the stand-in, doing what the
//	                       JSON standin.Script in FILE says ($VARS expanded)
//
// and the condition [root]. $TOKEN, $RESOLVER and $PIN are canaries.
func TestCLI(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", filepath.Dir(installerBin)+string(os.PathListSeparator)+env.Getenv("PATH"))
			for k, v := range scriptCanaries {
				env.Setenv(k, v)
			}
			// For `exec ctrld`: the same script as $WORK/bin/ctrld.
			env.Setenv(standin.EnvScript, standin.SidecarPath(filepath.Join(env.WorkDir, "bin", standin.Name)))
			env.Values[stateKey{}] = new(scriptState)
			// A loopback address of its own for each script's modelled
			// daemon to serve DNS on.
			env.Setenv("LISTENER", freeUDPAddr())
			// A daemon the device model started lives on if the script
			// fails before its uninstall: end whatever runs from $WORK.
			work := env.WorkDir
			env.Defer(func() { killUnder(work) })
			return nil
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "root":
				return os.Geteuid() == 0, nil
			case "full": // a script only CI's full run makes
				return os.Getenv(e2eFullEnv) == "1", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"ctrld-install":  runInstallerCmd,
			"exitcode":       exitCodeCmd,
			"standin-script": standinScriptCmd,
			"standin-build":  standinBuildCmd,
		},
	})
}

// scriptState is one script's: the last ctrld-install's exit status (-1
// for a signal), once one has run.
type scriptState struct {
	ran  bool
	exit int
}

type stateKey struct{}

func state(ts *testscript.TestScript) *scriptState { return ts.Value(stateKey{}).(*scriptState) }

// volatile are the parts of ctrld-install's output that differ from run to
// run, and what a golden file has in their place. Nothing else is
// rewritten.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`time left [0-9hmsµ.]+\)`), "time left <duration>)"},
	{regexp.MustCompile(`"elapsed_ms":[0-9]+`), `"elapsed_ms":<ms>`},
	{regexp.MustCompile(`"timestamp":"[^"]*"`), `"timestamp":"<timestamp>"`},
	{regexp.MustCompile(`"next_try":"[^"]*"`), `"next_try":"<time>"`},
	{regexp.MustCompile(`sent again from [0-9TZ:-]+,`), "sent again from <time>,"},
	{regexp.MustCompile(`not sent again before [0-9TZ:-]+`), "not sent again before <time>"},
	{regexp.MustCompile(`"installer_version":"[^"]*"`), `"installer_version":"<version>"`},
	{regexp.MustCompile(`"pid":[0-9]+`), `"pid":<pid>`},
	{regexp.MustCompile(`last run [0-9TZ:-]+, ([0-9]+ attempt\(s\)), [0-9]+ ms`), "last run <timestamp>, $1, <ms> ms"},
}

func scrub(s string) string {
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return s
}

// runInstallerCmd runs the built ctrld-install with the script's
// environment, directory and stdin. Its stdout and stderr are kept for the
// next stdout, stderr and cmp with the volatile parts replaced, and its exit
// status for exitcode. It fails the script when a canary appears in either,
// and, like exec, when the status is not what ! says.
func runInstallerCmd(ts *testscript.TestScript, neg bool, args []string) {
	// TestScript keeps what Exec captured to itself: a shell sends the
	// streams to files instead (outside $WORK, whose files are the
	// script's), then execs the binary.
	tmp, err := os.MkdirTemp("", "ctrld-install-std-*")
	ts.Check(err)
	defer os.RemoveAll(tmp)
	outFile, errFile := filepath.Join(tmp, "stdout"), filepath.Join(tmp, "stderr")
	err = ts.Exec("/bin/sh", append([]string{"-c", `o=$1 e=$2; shift 2; exec "$@" >"$o" 2>"$e"`,
		"sh", outFile, errFile, installerBin}, args...)...)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		ts.Check(err)
	}
	*state(ts) = scriptState{ran: true, exit: code}
	out, errOut := ts.ReadFile(outFile), ts.ReadFile(errFile)
	ts.Logf("[exit status %d]", code)
	for name, c := range scriptCanaries {
		if strings.Contains(out+errOut, c) {
			ts.Fatalf("ctrld-install printed the canary $%s:\n%s%s", name, out, errOut)
		}
	}
	fmt.Fprint(ts.Stdout(), scrub(out))
	fmt.Fprint(ts.Stderr(), scrub(errOut))
	switch {
	case neg && code == 0:
		ts.Fatalf("ctrld-install succeeded unexpectedly")
	case !neg && code != 0:
		ts.Fatalf("ctrld-install exited %d", code)
	}
}

// exitCodeCmd checks the exit status of the last ctrld-install.
func exitCodeCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: exitcode N")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	switch st := state(ts); {
	case !st.ran:
		ts.Fatalf("exitcode: no ctrld-install has run")
	case st.exit != want:
		ts.Fatalf("ctrld-install exited %d, want %d", st.exit, want)
	}
}

// standinScriptCmd makes $WORK/bin/ctrld the stand-in and gives it the
// script in the named file, with $VARS expanded. Unknown fields are an
// error, so a typo cannot silently do nothing.
func standinScriptCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: standin-script FILE")
	}
	text := os.Expand(ts.ReadFile(args[0]), ts.Getenv)
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	var s standin.Script
	ts.Check(dec.Decode(&s))
	bin := ts.MkAbs("bin")
	ts.Check(os.MkdirAll(bin, 0o755))
	exe := filepath.Join(bin, standin.Name)
	if _, err := os.Stat(exe); err == nil {
		ts.Check(standin.SetScript(exe, s))
		return
	}
	_, err := standin.Link(bin, standinMaster, s)
	ts.Check(err)
}

// standinBuildCmd puts the named build of the stand-in at $WORK/bin/ctrld
// as a package would put a new build of ctrld: written beside it, renamed
// over it. The script (its Builds) says how that build behaves.
func standinBuildCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: standin-build LABEL")
	}
	ts.Check(standin.ReplaceBuild(filepath.Join(ts.MkAbs("bin"), standin.Name), standinMaster, args[0]))
}

// freeUDPAddr is a loopback address and port nothing serves on now.
func freeUDPAddr() string {
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:5353"
	}
	defer c.Close()
	return c.LocalAddr().String()
}

// killUnder kills every process whose executable lies under dir.
func killUnder(dir string) {
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(cmdline), dir+string(os.PathSeparator)) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
