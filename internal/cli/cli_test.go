package cli

// In-process tests of the command line: cli.Run over buffers, with the
// default paths under a temporary directory. What needs no process (usage
// errors, help, version, codes, explain, summarize, status of a record)
// is tested here; what runs ctrld is tested through the built binary in
// cmd/ctrld-install.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/platform"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
)

// Canaries the scripts get in $TOKEN and $RESOLVER: no byte the command
// line prints may hold one.
const (
	canaryToken    = "k3x9CANARYTOKENq7w2e8r4t6y1u0i5"
	canaryResolver = "CANARYRESOLVER7c1d"
)

var update = flag.Bool("update", false, "rewrite the cmp goldens of testdata/script")

// result is one in-process run.
type result struct {
	exit           int
	stdout, stderr string
}

// runIn runs a command line in process. Every default path is under root,
// so a command that relies on one touches nothing on the machine.
func runIn(root, stdin string, args ...string) result {
	var out, errb bytes.Buffer
	a := &app{
		ctx:      context.Background(),
		io:       Stdio{In: strings.NewReader(stdin), Out: &out, Err: &errb},
		build:    Build{Version: "0.0.0-test", Commit: "test"},
		defaults: testDefaults(root),
	}
	code := a.run(args)
	return result{exit: code, stdout: out.String(), stderr: errb.String()}
}

func testDefaults(root string) platform.Defaults {
	return platform.Defaults{
		Home:        filepath.Join(root, "etc", "controld"),
		Ctrld:       filepath.Join(root, "usr", "local", "bin", "ctrld"),
		ServiceFile: filepath.Join(root, "etc", "systemd", "system", "ctrld.service"),
	}
}

// TestScripts runs testdata/script/*.txtar in process. Besides testscript's
// own commands a script has `ctrld-install ARGS` (cli.Run; its stdout and
// stderr are the next stdout and stderr) and `exitcode N`.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Setup: func(env *testscript.Env) error {
			env.Setenv("TOKEN", canaryToken)
			env.Setenv("RESOLVER", canaryResolver)
			env.Values[exitKey{}] = new(int)
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "root" {
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"ctrld-install": func(ts *testscript.TestScript, neg bool, args []string) {
				// The process would run in $WORK: an argument naming a
				// file there is that file.
				for i, arg := range args {
					if !strings.HasPrefix(arg, "-") && !filepath.IsAbs(arg) {
						if _, err := os.Stat(ts.MkAbs(arg)); err == nil {
							args[i] = ts.MkAbs(arg)
						}
					}
				}
				r := runIn(ts.MkAbs("root"), "", args...)
				*ts.Value(exitKey{}).(*int) = r.exit
				fmt.Fprint(ts.Stdout(), scrub(r.stdout))
				fmt.Fprint(ts.Stderr(), scrub(r.stderr))
				for _, canary := range []string{canaryToken, canaryResolver} {
					if strings.Contains(r.stdout+r.stderr, canary) {
						ts.Fatalf("ctrld-install printed a canary")
					}
				}
				if (r.exit != 0) != neg {
					ts.Fatalf("ctrld-install exited %d", r.exit)
				}
			},
			"exitcode": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: exitcode N")
				}
				want, err := strconv.Atoi(args[0])
				ts.Check(err)
				if got := *ts.Value(exitKey{}).(*int); got != want {
					ts.Fatalf("ctrld-install exited %d, want %d", got, want)
				}
			},
		},
	})
}

type exitKey struct{}

var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"timestamp":"[^"]*"`), `"timestamp":"<timestamp>"`},
	{regexp.MustCompile(`"elapsed_ms":[0-9]+`), `"elapsed_ms":<ms>`},
	{regexp.MustCompile(`go1\.[0-9.]+`), `<go>`},
}

func scrub(s string) string {
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return s
}

// A panic in a command ends it as its failures end, with a fixed sentence
// and none of the panic's value: a report command with INSTALLER_FAILED's
// exit status, a device command with INSTALLER_FAILED's lines as well.
func TestRecoverPanic(t *testing.T) {
	for _, tc := range []struct {
		kind     kind
		wantLast string
	}{
		{reportKind, "ctrld-install: error: an unexpected error stopped the run"},
		{deviceKind, "ctrld-install: provisioning failed: stage=installer code=INSTALLER_FAILED (exit 60)"},
	} {
		var out bytes.Buffer
		a := &app{io: Stdio{Out: &out, Err: &out}}
		c := &call{cmd: &command{kind: tc.kind, verb: outcome.Install}, p: report.New(&out, &out, nil, false)}
		code := func() (code int) {
			defer a.recoverPanic(c, &code)
			panic("SECRETCANARY9")
		}()
		if code != 60 {
			t.Errorf("kind %d: exit %d, want 60", tc.kind, code)
		}
		lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
		if lines[len(lines)-1] != tc.wantLast || strings.Contains(out.String(), "SECRETCANARY9") {
			t.Errorf("kind %d printed:\n%s", tc.kind, out.String())
		}
	}
}
