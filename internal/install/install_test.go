package install

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/home"
	"github.com/Control-D-Inc/ctrld-install/internal/lock"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/runner"
	"github.com/Control-D-Inc/ctrld-install/internal/secret"
	"github.com/Control-D-Inc/ctrld-install/internal/store"
	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// machine is an in-process ctrld and service manager: each ctrld command
// answers from a script of results, and start, restart and uninstall
// change whether the service is installed and running.
type machine struct {
	mu        sync.Mutex
	version   string
	installed bool
	running   bool
	starts    []step // the nth start uses the nth step, the last repeating
	restart   step
	uninstall step
	calls     []string
	waits     []time.Duration
	onSleep   func()
	// definition is the service definition's text once installed ("" for
	// one that says nothing); binaryChanged that the daemon runs another
	// binary than the one on disk.
	definition    string
	binaryChanged bool
	// heldRestart: systemd manages the unit and waits out its RestartSec
	// after the daemon died; ctrld status still says running.
	heldRestart bool
}

type step struct {
	lines    []string
	exit     int
	timeout  bool
	installs bool // the service is installed and running afterwards
	removes  bool // the service is gone afterwards
	wait     func(ctx context.Context)
}

func (m *machine) run(ctx context.Context, c runner.Command) (runner.Result, error) {
	m.mu.Lock()
	if c.Path == fakeSystemctl {
		defer m.mu.Unlock()
		m.calls = append(m.calls, "systemctl "+strings.Join(c.Args, " "))
		switch c.Args[0] {
		case "show":
			state := []string{"ActiveState=active", "SubState=running"}
			if m.heldRestart || !m.running {
				state = []string{"ActiveState=activating", "SubState=auto-restart"}
			}
			for _, l := range state {
				c.Line([]byte(l))
			}
		case "restart":
			m.heldRestart, m.running = false, m.installed
		}
		return runner.Result{}, nil
	}
	m.calls = append(m.calls, strings.Join(c.Args, " "))
	var s step
	cmd := c.Args[0]
	if cmd == "service" && len(c.Args) > 1 {
		cmd = c.Args[1]
	} else if strings.HasPrefix(m.version, "v1.2.") && (cmd == "status" || cmd == "restart" || cmd == "uninstall") {
		// ctrld 1.2 has these under service only.
		m.mu.Unlock()
		return runner.Result{ExitCode: 1}, nil
	}
	switch cmd {
	case "--version":
		s = step{lines: []string{"ctrld version " + m.version}}
	case "status":
		if !m.running && !m.heldRestart {
			s.exit = 1
		}
	case "start":
		n := 0
		for _, call := range m.calls {
			if strings.HasPrefix(call, "start ") {
				n++
			}
		}
		s = m.starts[min(n, len(m.starts))-1]
	case "restart":
		s = m.restart
	case "uninstall":
		s = m.uninstall
	}
	m.mu.Unlock()
	if s.wait != nil {
		s.wait(ctx)
	}
	for _, l := range s.lines {
		if c.Line != nil {
			c.Line([]byte(l))
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.installs {
		m.installed, m.running, m.binaryChanged = true, true, false
	}
	if s.removes {
		m.installed, m.running = false, false
	}
	if s.timeout {
		return runner.Result{ExitCode: -1, TimedOut: true}, nil
	}
	return runner.Result{ExitCode: s.exit}, nil
}

func (m *machine) count(prefix string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

func (m *machine) deps() Deps {
	return Deps{
		Run: m.run,
		Sleep: func(ctx context.Context, d time.Duration) error {
			m.mu.Lock()
			m.waits = append(m.waits, d)
			f := m.onSleep
			m.mu.Unlock()
			if f != nil {
				f()
			}
			return ctx.Err()
		},
		Now:        time.Now,
		Privileged: func() (bool, error) { return true, nil },
		ServiceRegistered: func(string) bool {
			m.mu.Lock()
			defer m.mu.Unlock()
			return m.installed
		},
		CheckHome:  home.Checker{UID: os.Geteuid()}.Prepare,
		Lock:       lock.Acquire,
		Executable: func(string) bool { return true },
		Definition: func(string) (parse.Definition, bool) {
			m.mu.Lock()
			defer m.mu.Unlock()
			if !m.installed || m.definition == "" {
				return parse.Definition{}, false
			}
			d, err := parse.ServiceDefinition(strings.NewReader(m.definition), "ctrld")
			return d, err == nil
		},
		DaemonRunsBinary: func(context.Context, string, string) parse.Same {
			m.mu.Lock()
			defer m.mu.Unlock()
			switch {
			case !m.running:
				return parse.SameUnknown
			case m.binaryChanged:
				return parse.SameNo
			}
			return parse.SameYes
		},
	}
}

var (
	ok         = step{lines: []string{"NTC Service started"}, installs: true}
	unreachble = step{lines: []string{"provisioning failed: stage=bootstrap code=API_UNREACHABLE (exit 31)"}, exit: 31}
	bind       = step{lines: []string{"provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)"}, exit: 41}
)

func config(t *testing.T) Config {
	home := filepath.Join(wine.TempDir(t), "home")
	return Config{
		Ctrld: "/ctrld", Home: home, ResultFile: filepath.Join(home, "provision_result.json"),
		ServiceFile: "/service", Timeout: 5 * time.Minute, Retries: 2,
		Secret:           func(context.Context) (Secret, error) { return Token("SECRETCANARY9"), nil },
		InstallerVersion: "0.2.0",
	}
}

func provision(t *testing.T, ctx context.Context, cfg Config, m *machine) (outcome.Outcome, string) {
	t.Helper()
	var out bytes.Buffer
	p := report.New(&out, &out, nil, false)
	o, j := Run(ctx, cfg, m.deps(), p)
	report.Emit(p, sinkOf(j), o, "default", cfg.InstallerVersion)
	j.Close()
	return o, out.String()
}

func sinkOf(j *Journal) report.Sink {
	if j == nil {
		return nil
	}
	return j
}

func TestPipeline(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		m        *machine
		cfg      func(*Config)
		code     string
		action   outcome.Action
		attempts int
		starts   int
		waits    []time.Duration
	}{
		{name: "success", m: &machine{version: "1.5.0", starts: []step{ok}},
			code: codes.OK, action: outcome.ActionProvisioned, attempts: 1, starts: 1},
		{name: "retryable, then success", m: &machine{version: "1.5.0", starts: []step{unreachble, ok}},
			code: codes.OK, action: outcome.ActionProvisioned, attempts: 2, starts: 2, waits: []time.Duration{10 * time.Second}},
		{name: "retries are spent", m: &machine{version: "1.5.0", starts: []step{unreachble}},
			code: codes.APIUnreachable, action: outcome.ActionProvisioned, attempts: 3, starts: 3, waits: []time.Duration{10 * time.Second, 20 * time.Second}},
		{name: "no retries asked for", m: &machine{version: "1.5.0", starts: []step{unreachble}}, cfg: func(c *Config) { c.Retries = 0 },
			code: codes.APIUnreachable, action: outcome.ActionProvisioned, attempts: 1, starts: 1},
		{name: "fatal is never retried", m: &machine{version: "1.5.0", starts: []step{bind}},
			code: codes.ListenerBindFailed, action: outcome.ActionProvisioned, attempts: 1, starts: 1},
		{name: "a failed attempt that left a healthy service is not re-provisioned",
			m:    &machine{version: "1.5.0", starts: []step{{lines: unreachble.lines, exit: 31, installs: true}}},
			code: codes.OK, action: outcome.ActionProvisioned, attempts: 1, starts: 1, waits: []time.Duration{10 * time.Second}},
		{name: "a recovered warning at exit 0 is success",
			m:    &machine{version: "1.5.0", starts: []step{{lines: []string{"WRN could not fetch resolver using bootstrap DNS, retrying... error=\"dial tcp: i/o timeout\""}, installs: true}}},
			code: codes.OK, action: outcome.ActionProvisioned, attempts: 1, starts: 1},
		{name: "the budget cannot hold another attempt", m: &machine{version: "1.5.0", starts: []step{unreachble}}, cfg: func(c *Config) { c.Timeout = 20 * time.Second },
			code: codes.APIUnreachable, action: outcome.ActionProvisioned, attempts: 1, starts: 1},
		{name: "a timeout is retried", m: &machine{version: "1.5.0", starts: []step{{timeout: true}}},
			code: codes.CtrldTimeout, action: outcome.ActionProvisioned, attempts: 3, starts: 3, waits: []time.Duration{10 * time.Second, 20 * time.Second}},
		{name: "a token needs ctrld 1.3.0", m: &machine{version: "v1.2.1-0c99d27", starts: []step{ok}},
			code: codes.CtrldVersionUnsupported, action: outcome.ActionNone},
		{name: "a resolver ID works on 1.2.1", m: &machine{version: "v1.2.1-0c99d27", starts: []step{ok}},
			cfg: func(c *Config) {
				c.Secret = func(context.Context) (Secret, error) { return Resolver("SECRETCANARY9"), nil }
			},
			code: codes.OK, action: outcome.ActionProvisioned, attempts: 1, starts: 1},
		{name: "a dev build proceeds", m: &machine{version: "dev-abc", starts: []step{ok}},
			code: codes.OK, action: outcome.ActionProvisioned, attempts: 1, starts: 1},
		{name: "an unknown flag after -- is the admin's",
			m:    &machine{version: "1.5.0", starts: []step{{lines: []string{"Error: unknown flag: --bogus-flag", "Usage:"}, exit: 1}}},
			code: codes.InstallerUsage, action: outcome.ActionProvisioned, attempts: 1, starts: 1},
		{name: "an unknown flag ctrld-install added",
			m:    &machine{version: "dev", starts: []step{{lines: []string{"Error: unknown flag: --cd-org", "Usage:"}, exit: 1}}},
			code: codes.CtrldVersionUnsupported, action: outcome.ActionProvisioned, attempts: 1, starts: 1},
		{name: "healthy and current is skipped", m: &machine{version: "1.5.0", installed: true, running: true},
			code: codes.OK, action: outcome.ActionSkipped},
		{name: "--force provisions a healthy ctrld", m: &machine{version: "1.5.0", installed: true, running: true, starts: []step{ok}},
			cfg:  func(c *Config) { c.Force = true },
			code: codes.OK, action: outcome.ActionProvisioned, attempts: 1, starts: 1},
		{name: "min version", m: &machine{version: "1.4.0", starts: []step{ok}},
			cfg:  func(c *Config) { c.MinVersion = parse.MustParseVersion("1.5.0") },
			code: codes.CtrldVersionUnsupported, action: outcome.ActionNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := config(t)
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			o, out := provision(t, context.Background(), cfg, tc.m)
			if o.Code.Name != tc.code {
				t.Errorf("code = %s, want %s; output:\n%s", o.Code.Name, tc.code, out)
			}
			if o.Action != tc.action {
				t.Errorf("action = %v, want %v", o.Action, tc.action)
			}
			if o.Attempts != tc.attempts {
				t.Errorf("attempts = %d, want %d", o.Attempts, tc.attempts)
			}
			if got := tc.m.count("start "); got != tc.starts {
				t.Errorf("runs of ctrld start = %d, want %d", got, tc.starts)
			}
			if !reflect.DeepEqual(tc.m.waits, tc.waits) {
				t.Errorf("waits = %v, want %v", tc.m.waits, tc.waits)
			}
			if strings.Contains(out, "SECRETCANARY9") {
				t.Errorf("the secret reached the output; the secret never reaches a surface:\n%s", out)
			}
			rec, err := record.Read(filepath.Join(cfg.Home, record.FileName))
			if err != nil {
				t.Fatal(err)
			}
			if rec.Code != tc.code {
				t.Errorf("record code = %s, want %s: the record says what stdout says", rec.Code, tc.code)
			}
		})
	}
}

// Enrolment-time networks are often not up yet: a retryable failure is
// tried again after a wait, inside the one budget. The wait takes no time
// here; instead the result file the first attempt left ages by the wait, as
// it would on a real clock, and so is stale for the second attempt.
func TestRetryAfterRetryableFailure(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	unreachable := step{exit: 31, wait: func(context.Context) {
		if err := os.WriteFile(cfg.ResultFile, []byte(`{"version":1,"timestamp":"2026-08-18T12:00:00Z",`+
			`"stage":"bootstrap","code":"API_UNREACHABLE","exit_code":31,"message":"SECRETCANARY9"}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}}
	m := &machine{version: "1.5.0", starts: []step{unreachable, ok}}
	deps := m.deps()
	sleep := deps.Sleep
	deps.Sleep = func(ctx context.Context, d time.Duration) error {
		fi, err := os.Stat(cfg.ResultFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(cfg.ResultFile, fi.ModTime().Add(-d), fi.ModTime().Add(-d)); err != nil {
			t.Fatal(err)
		}
		return sleep(ctx, d)
	}

	var out bytes.Buffer
	p := report.New(&out, &out, nil, false)
	o, j := Run(context.Background(), cfg, deps, p)
	report.Emit(p, sinkOf(j), o, "default", cfg.InstallerVersion)
	j.Close()

	if o.Code.Name != codes.OK {
		t.Errorf("code = %s, want %s; output:\n%s", o.Code.Name, codes.OK, out.String())
	}
	if o.Attempts != 2 {
		t.Errorf("attempts = %d, want 2", o.Attempts)
	}
	if got := m.count("start "); got != 2 {
		t.Errorf("runs of ctrld start = %d, want 2", got)
	}
	if want := []time.Duration{10 * time.Second}; !reflect.DeepEqual(m.waits, want) {
		t.Errorf("waits = %v, want %v", m.waits, want)
	}
	outRE := regexp.MustCompile(`^ctrld-install: plan: nothing is installed\n` +
		`ctrld-install: running ctrld start \(ctrld 1\.5\.0, attempt 1 of 3, time left [0-9ms.]+\)\n` +
		`ctrld-install: attempt 1 failed: stage=bootstrap code=API_UNREACHABLE \(exit 31\); retrying in 10s\n` +
		`ctrld-install: running ctrld start \(ctrld 1\.5\.0, attempt 2 of 3, time left [0-9ms.]+\)\n` +
		`ctrld-install: provisioning succeeded \(exit 0\)\n$`)
	if !outRE.MatchString(out.String()) {
		t.Errorf("output:\n%s\ndoes not match %s", out.String(), outRE)
	}
	if o.ResultFile != outcome.FileStale {
		t.Errorf("result file = %v, want %v: the first attempt's result file is older than the second attempt", o.ResultFile, outcome.FileStale)
	}
	if strings.Contains(out.String(), "SECRETCANARY9") {
		t.Errorf("the secret reached the output:\n%s", out.String())
	}
	rec, err := record.Read(filepath.Join(cfg.Home, record.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Code != codes.OK {
		t.Errorf("record code = %s, want %s", rec.Code, codes.OK)
	}
	if rec.Attempts != 2 {
		t.Errorf("record attempts = %d, want 2", rec.Attempts)
	}
	if rec.ResultFile != "stale" {
		t.Errorf("record result_file = %q, want %q", rec.ResultFile, "stale")
	}
}

func TestUpgradeAppliesWithRestart(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	m := &machine{version: "1.5.0", starts: []step{ok}, restart: step{installs: true}}
	o, _ := provision(t, context.Background(), cfg, m)
	if o.Code.Name != codes.OK {
		t.Fatalf("first provisioning: code = %s, want %s", o.Code.Name, codes.OK)
	}

	// A package replaced the binary under the running service.
	m.version, m.binaryChanged = "1.6.0", true
	o, out := provision(t, context.Background(), cfg, m)
	if o.Code.Name != codes.OK {
		t.Errorf("upgrade: code = %s, want %s; output:\n%s", o.Code.Name, codes.OK, out)
	}
	if o.Action != outcome.ActionUpgraded {
		t.Errorf("upgrade: action = %v, want %v", o.Action, outcome.ActionUpgraded)
	}
	if got := m.count("restart"); got != 1 {
		t.Errorf("runs of ctrld restart = %d, want 1", got)
	}
	if got := m.count("start "); got != 1 {
		t.Errorf("runs of ctrld start = %d, want 1: an upgrade never re-provisions", got)
	}
	rec, err := record.Read(filepath.Join(cfg.Home, record.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if rec.CtrldVersion == nil {
		t.Errorf("record ctrld_version = nil, want %q", "1.6.0")
	} else if *rec.CtrldVersion != "1.6.0" {
		t.Errorf("record ctrld_version = %q, want %q", *rec.CtrldVersion, "1.6.0")
	}
	if rec.Action != "upgraded" {
		t.Errorf("record action = %q, want %q", rec.Action, "upgraded")
	}

	o, _ = provision(t, context.Background(), cfg, m)
	if o.Action != outcome.ActionSkipped {
		t.Errorf("same version again: action = %v, want %v: the same version again is skipped", o.Action, outcome.ActionSkipped)
	}

	m.version, m.binaryChanged = "1.7.0", true
	m.restart = step{exit: 1}
	o, _ = provision(t, context.Background(), cfg, m)
	if o.Code.Name != codes.ServiceStartFailed {
		t.Errorf("restart exits 1: code = %s, want %s", o.Code.Name, codes.ServiceStartFailed)
	}
	// A restart that exits 0 and leaves the old daemon running has not
	// applied the build.
	m.version, m.binaryChanged = "1.7.1", true
	m.running = true
	m.restart = step{}
	restarts := m.count("restart")
	o, out = provision(t, context.Background(), cfg, m)
	if o.Code.Name != codes.ServiceStartFailed {
		t.Errorf("restart left the old daemon: code = %s, want %s\n%s", o.Code.Name, codes.ServiceStartFailed, out)
	}
	// The old daemon still runs and answers: nothing to bring back.
	if o.Action == outcome.ActionRolledBack || m.count("restart") != restarts+1 {
		t.Errorf("restart left the old daemon: action %v, %d restarts, want no rollback\n%s", o.Action, m.count("restart")-restarts, out)
	}
	m.version, m.binaryChanged = "1.8.0", true
	m.running = true
	m.restart = step{removes: true}
	o, _ = provision(t, context.Background(), cfg, m)
	if o.Code.Name != codes.ServiceNotRegistered {
		t.Errorf("restart removes the service: code = %s, want %s", o.Code.Name, codes.ServiceNotRegistered)
	}
}

func TestInterruptedWhileWaitingToRetry(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := &machine{version: "1.5.0", starts: []step{unreachble}, onSleep: cancel}
	o, _ := provision(t, ctx, config(t), m)
	if o.Code.Name != codes.InstallerInterrupted {
		t.Errorf("code = %s, want %s", o.Code.Name, codes.InstallerInterrupted)
	}
	if got := m.count("start "); got != 1 {
		t.Errorf("runs of ctrld start = %d, want 1", got)
	}
}

func TestLockBusyWritesNothing(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	if err := os.MkdirAll(cfg.Home, 0o755); err != nil {
		t.Fatal(err)
	}
	held, err := lock.Acquire(context.Background(), cfg.Home)
	if err != nil {
		t.Fatalf("lock.Acquire: %v", err)
	}
	defer held.Release()
	cfg.Timeout = 300 * time.Millisecond
	m := &machine{version: "1.5.0", starts: []step{ok}}
	var out bytes.Buffer
	o, j := Run(context.Background(), cfg, m.deps(), report.New(&out, &out, nil, false))
	if o.Code.Name != codes.InstallerBusy {
		t.Errorf("code = %s, want %s", o.Code.Name, codes.InstallerBusy)
	}
	if j != nil {
		t.Errorf("Run returned a journal; a run without the lock has no journal")
	}
	_, err = os.Stat(filepath.Join(cfg.Home, record.FileName))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Stat(record) error = %v, want os.ErrNotExist", err)
	}
	if got := m.count("start "); got != 0 {
		t.Errorf("runs of ctrld start = %d, want 0", got)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg.Timeout = 5 * time.Minute
	o, j = Run(ctx, cfg, m.deps(), report.New(&out, &out, nil, false))
	if o.Code.Name != codes.InstallerInterrupted {
		t.Errorf("interrupted while waiting for the lock: code = %s, want %s", o.Code.Name, codes.InstallerInterrupted)
	}
	if j != nil {
		t.Errorf("interrupted while waiting for the lock: Run returned a journal, want nil")
	}
}

// A budget shorter than a retry needs still runs the first attempt.
func TestShortBudgetStillStartsCtrld(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	cfg.Timeout = 15 * time.Second
	m := &machine{version: "1.5.0", starts: []step{ok}}
	o, out := provision(t, context.Background(), cfg, m)
	if o.Code.Name != codes.OK {
		t.Errorf("code = %s, want %s; output:\n%s", o.Code.Name, codes.OK, out)
	}
	if got := m.count("start "); got != 1 {
		t.Errorf("runs of ctrld start = %d, want 1", got)
	}
}

func TestSecretThatNeverArrives(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	cfg.Timeout = 200 * time.Millisecond
	never, w := io.Pipe() // a standard input that never delivers
	defer w.Close()
	cfg.Secret = func(ctx context.Context) (Secret, error) {
		v, err := secret.Read(ctx, secret.Reader(secret.Token, never))
		return Token(v), err
	}
	m := &machine{version: "1.5.0", starts: []step{ok}}
	o, out := provision(t, context.Background(), cfg, m)
	if o.Code.Name != codes.InstallerUsage {
		t.Errorf("code = %s, want %s", o.Code.Name, codes.InstallerUsage)
	}
	if want := "before the time limit"; !strings.Contains(out, want) {
		t.Errorf("output does not contain %q:\n%s", want, out)
	}
	if got := m.count("start "); got != 0 {
		t.Errorf("runs of ctrld start = %d, want 0", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	cfg.Timeout = time.Minute
	o, _ = provision(t, ctx, cfg, m)
	if o.Code.Name != codes.InstallerInterrupted {
		t.Errorf("a signal while waiting for the token: code = %s, want %s", o.Code.Name, codes.InstallerInterrupted)
	}
}

func TestUninstall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		m        *machine
		code     string
		attempts int
		line     string
		action   string
		calls    []string
	}{
		{"nothing installed", &machine{version: "1.5.0"}, codes.OK, 0, "not installed, nothing to do (exit 0)", "uninstalled",
			[]string{"--version", "status"}},
		{"removed", &machine{version: "1.5.0", installed: true, running: true, uninstall: step{removes: true}}, codes.OK, 1, "uninstall succeeded (exit 0)", "uninstalled",
			[]string{"--version", "status", "uninstall", "status"}},
		{"removed, ctrld 1.2", &machine{version: "v1.2.1-0c99d27", installed: true, running: true, uninstall: step{removes: true}}, codes.OK, 1, "uninstall succeeded (exit 0)", "uninstalled",
			[]string{"--version", "service status", "service uninstall", "service status"}},
		{"a PIN is required", &machine{version: "1.5.0", installed: true, running: true, uninstall: step{exit: 126}}, codes.DeactivationPinRequired, 1,
			"uninstall failed: stage=service code=DEACTIVATION_PIN_REQUIRED (exit 126)", "", []string{"--version", "status", "uninstall"}},
		{"exit 0 but the service file remains", &machine{version: "1.5.0", installed: true, running: true}, codes.ServiceUninstallFailed, 1,
			"uninstall failed: stage=service code=SERVICE_UNINSTALL_FAILED (exit 56)", "", []string{"--version", "status", "uninstall", "status"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := config(t)
			cfg.Secret = func(context.Context) (Secret, error) { return PIN(""), nil }
			var out bytes.Buffer
			p := report.New(&out, &out, nil, false)
			o, j := Uninstall(context.Background(), cfg, tc.m.deps(), p)
			report.Emit(p, sinkOf(j), o, "default", "0.2.0")
			j.Close()
			if o.Code.Name != tc.code {
				t.Errorf("code = %s, want %s", o.Code.Name, tc.code)
			}
			if o.Attempts != tc.attempts {
				t.Errorf("attempts = %d, want %d", o.Attempts, tc.attempts)
			}
			if want := "ctrld-install: " + tc.line + "\n"; !strings.HasSuffix(out.String(), want) {
				t.Errorf("output does not end with %q:\n%s", want, out.String())
			}
			rec, err := record.Read(filepath.Join(cfg.Home, record.FileName))
			if err != nil {
				t.Fatal(err)
			}
			if rec.Action != tc.action {
				t.Errorf("record action = %q, want %q: uninstalled only when the removal held", rec.Action, tc.action)
			}
			if !slices.Equal(tc.m.calls, tc.calls) {
				t.Errorf("ctrld ran %q, want %q", tc.m.calls, tc.calls)
			}
		})
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		m    *machine
		min  string
		code string
		act  outcome.Action
	}{
		{"never provisioned is not installed", &machine{version: "1.5.0"}, "", codes.ServiceNotRegistered, outcome.ActionNotInstalled},
		{"healthy", &machine{version: "1.5.0", installed: true, running: true}, "", codes.OK, outcome.ActionNone},
		{"not running", &machine{version: "1.5.0", installed: true}, "", codes.ServiceNotRunning, outcome.ActionNone},
		{"older than the package's minimum", &machine{version: "1.5.0", installed: true, running: true}, "1.6.0", codes.CtrldVersionUnsupported, outcome.ActionNone},
		{"as new as the minimum", &machine{version: "1.5.0", installed: true, running: true}, "1.5.0", codes.OK, outcome.ActionNone},
		// The daemon that runs is what counts, not the file on disk.
		{"a new binary the daemon does not run yet", &machine{version: "1.6.0", installed: true, running: true, binaryChanged: true}, "1.6.0",
			codes.CtrldVersionUnsupported, outcome.ActionNone},
		{"a new binary, no minimum", &machine{version: "1.6.0", installed: true, running: true, binaryChanged: true}, "", codes.OK, outcome.ActionNone},
		{"ctrld 1.2 asked in its own form", &machine{version: "v1.2.1-0c99d27", installed: true, running: true}, "", codes.OK, outcome.ActionNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config(t)
			if tc.min != "" {
				cfg.MinVersion = parse.MustParseVersion(tc.min)
			}
			var out bytes.Buffer
			o := Verify(context.Background(), cfg, tc.m.deps(), report.New(&out, &out, nil, false))
			if o.Code.Name != tc.code {
				t.Errorf("code = %s, want %s", o.Code.Name, tc.code)
			}
			if o.Action != tc.act {
				t.Errorf("action = %v, want %v", o.Action, tc.act)
			}
			if _, err := os.Stat(cfg.Home); !os.IsNotExist(err) {
				t.Errorf("Stat(home) error = %v, want not-exist: verify writes nothing", err)
			}
		})
	}
}

// defined is a machine whose installed service has this init script.
func defined(m *machine, cmd string) *machine {
	m.definition = "#!/bin/sh\ncmd=\"" + cmd + "\"\n"
	return m
}

const provisionedR1 = `/ctrld "run" "--cd" "R1" "--intercept-mode=dns" "--iface=auto" "--homedir=/etc/controld" "--config=/etc/controld/ctrld.toml"`

// The device as it is decides: each row is one observation, the request,
// what ran and how the run ended.
func TestPlanActs(t *testing.T) {
	t.Parallel()
	noSecret := func(c *Config) { c.Secret = func(context.Context) (Secret, error) { return Secret{}, nil } }
	resolver := func(id string, extra ...string) func(*Config) {
		return func(c *Config) {
			c.Secret = func(context.Context) (Secret, error) { return Resolver(id), nil }
			c.Extra = extra
		}
	}
	for _, tc := range []struct {
		name   string
		m      *machine
		cfg    func(*Config)
		code   string
		action outcome.Action
		calls  []string
		plan   string
	}{
		{name: "stopped, no token: repaired without provisioning", m: &machine{version: "1.5.0", installed: true, restart: step{installs: true}}, cfg: noSecret,
			code: codes.OK, action: outcome.ActionRepaired, calls: []string{"--version", "status", "restart", "status"},
			plan: "the service is registered but not running"},
		{name: "stopped, ctrld 1.2: its own form", m: &machine{version: "v1.2.1-0c99d27", installed: true, restart: step{installs: true}}, cfg: noSecret,
			code: codes.OK, action: outcome.ActionRepaired, calls: []string{"--version", "service status", "service restart", "service status"}},
		{name: "a repair that does not hold, no token", m: &machine{version: "1.5.0", installed: true}, cfg: noSecret,
			code: codes.ServiceNotRunning, action: outcome.ActionRepaired, calls: []string{"--version", "status", "restart", "status"}},
		{name: "a repair that does not hold, with a token: provisioned", m: &machine{version: "1.5.0", installed: true, starts: []step{ok}},
			code: codes.OK, action: outcome.ActionProvisioned, calls: []string{"--version", "status", "restart", "status", "start --cd-org SECRETCANARY9", "status"}},
		{name: "nothing installed, no token", m: &machine{version: "1.5.0"}, cfg: noSecret,
			code: codes.InstallerUsage, action: outcome.ActionNone, calls: nil},
		{name: "healthy, no token", m: &machine{version: "1.5.0", installed: true, running: true}, cfg: noSecret,
			code: codes.OK, action: outcome.ActionSkipped, calls: []string{"--version", "status"}},
		{name: "the same resolver and flags", m: defined(&machine{version: "1.5.0", installed: true, running: true}, provisionedR1), cfg: resolver("R1", "--intercept-mode=dns"),
			code: codes.OK, action: outcome.ActionSkipped, calls: []string{"--version", "status"}},
		{name: "another resolver", m: defined(&machine{version: "1.5.0", installed: true, running: true, starts: []step{ok}}, provisionedR1), cfg: resolver("R2", "--intercept-mode=dns"),
			code: codes.OK, action: outcome.ActionProvisioned, calls: []string{"--version", "status", "start --cd R2 --intercept-mode=dns", "status"},
			plan: "configuration changed: resolver"},
		{name: "other extra flags", m: defined(&machine{version: "1.5.0", installed: true, running: true, starts: []step{ok}}, provisionedR1), cfg: resolver("R1"),
			code: codes.OK, action: outcome.ActionProvisioned, calls: []string{"--version", "status", "start --cd R1", "status"},
			plan: "configuration changed: extra flags"},
		{name: "a new binary under a healthy daemon", m: defined(&machine{version: "1.6.0", installed: true, running: true, binaryChanged: true, restart: step{installs: true}}, provisionedR1),
			cfg: resolver("R1", "--intercept-mode=dns"), code: codes.OK, action: outcome.ActionUpgraded, calls: []string{"--version", "status", "restart", "status"},
			plan: "the ctrld binary on disk is not the one the running daemon was started from"},
		{name: "a new binary, ctrld 1.2", m: &machine{version: "v1.2.1-0c99d27", installed: true, running: true, binaryChanged: true, restart: step{installs: true}}, cfg: noSecret,
			code: codes.OK, action: outcome.ActionUpgraded, calls: []string{"--version", "service status", "service restart", "service status"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := config(t)
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			o, out := provision(t, context.Background(), cfg, tc.m)
			if o.Code.Name != tc.code || o.Action != tc.action {
				t.Errorf("%s, action %v; want %s, %v; output:\n%s", o.Code.Name, o.Action, tc.code, tc.action, out)
			}
			if !slices.Equal(tc.m.calls, tc.calls) {
				t.Errorf("ctrld ran %q, want %q", tc.m.calls, tc.calls)
			}
			if tc.plan != "" && !strings.Contains(out, "ctrld-install: plan: "+tc.plan+"\n") {
				t.Errorf("no plan line %q:\n%s", tc.plan, out)
			}
			for _, secret := range []string{"SECRETCANARY9", "R1", "R2"} {
				if strings.Contains(out, secret) {
					t.Errorf("the output holds %q:\n%s", secret, out)
				}
			}
		})
	}
}

// A token is compared by its keyed fingerprint, kept only after a
// provisioning with it succeeded.
func TestTokenChange(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	m := defined(&machine{version: "1.5.0", starts: []step{ok}}, `/ctrld "run" "--iface=auto" "--homedir=/etc/controld" "--cd=R1" "--config=/etc/controld/ctrld.toml"`)
	token := func(v string) { cfg.Secret = func(context.Context) (Secret, error) { return Token(v), nil } }
	token("TOKENONE1234")
	if o, out := provision(t, context.Background(), cfg, m); o.Action != outcome.ActionProvisioned || !o.Code.IsOK() {
		t.Fatalf("first: %v %s\n%s", o.Action, o.Code.Name, out)
	}
	b, err := os.ReadFile(store.FingerprintPath(cfg.Home))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "TOKENONE1234") {
		t.Fatal("the fingerprint file holds the token")
	}
	// Windows has no mode bits; its ACL is checked in fingerprint_windows_test.go.
	if fi, _ := os.Stat(store.FingerprintPath(cfg.Home)); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("fingerprint mode %v, want 0600", fi.Mode().Perm())
	}
	if o, _ := provision(t, context.Background(), cfg, m); o.Action != outcome.ActionSkipped {
		t.Errorf("the same token: %v, want skipped", o.Action)
	}
	// Provisioned again with the same token, the fingerprint is kept as it
	// is: its salt and rounds were paid for once.
	cfg.Force = true
	if o, out := provision(t, context.Background(), cfg, m); o.Action != outcome.ActionProvisioned || !o.Code.IsOK() {
		t.Fatalf("the same token, forced: %v %s\n%s", o.Action, o.Code.Name, out)
	}
	cfg.Force = false
	if again, _ := os.ReadFile(store.FingerprintPath(cfg.Home)); string(again) != string(b) {
		t.Errorf("the same token rewrote the fingerprint")
	}
	token("TOKENTWO5678")
	o, out := provision(t, context.Background(), cfg, m)
	if o.Action != outcome.ActionProvisioned || !strings.Contains(out, "plan: configuration changed: token\n") {
		t.Errorf("another token: %v\n%s", o.Action, out)
	}
	if changed, _ := os.ReadFile(store.FingerprintPath(cfg.Home)); string(changed) == string(b) {
		t.Errorf("another token left the old fingerprint in place")
	}
	if o, _ := provision(t, context.Background(), cfg, m); o.Action != outcome.ActionSkipped {
		t.Errorf("the new token again: %v, want skipped", o.Action)
	}
}

// A provisioning that failed is not trusted, whatever runs afterwards:
// ctrld 1.2 leaves a daemon with a default configuration behind.
func TestFailedProvisioningIsNotSkipped(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	failedButRunning := step{lines: []string{"WRN could not fetch resolver config error=\"Device does not exist\" mode=cd", "ERR Service did not start"}, exit: 1, installs: true}
	m := &machine{version: "1.5.0", starts: []step{failedButRunning, ok}}
	cfg.Retries = 0
	if o, _ := provision(t, context.Background(), cfg, m); o.Code.IsOK() {
		t.Fatalf("the failure: %s", o.Code.Name)
	}
	o, out := provision(t, context.Background(), cfg, m)
	if o.Action != outcome.ActionProvisioned || !o.Code.IsOK() || !strings.Contains(out, "plan: the last provisioning failed\n") {
		t.Errorf("after a failure: %v %s\n%s", o.Action, o.Code.Name, out)
	}
	if o, _ := provision(t, context.Background(), cfg, m); o.Action != outcome.ActionSkipped {
		t.Errorf("after the success: %v, want skipped", o.Action)
	}
}

func TestDryRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		m    *machine
		line string
		act  outcome.Action
	}{
		{"nothing installed", &machine{version: "1.5.0"}, "dry run: would provision (exit 0)", outcome.ActionProvisioned},
		{"healthy", &machine{version: "1.5.0", installed: true, running: true}, "dry run: nothing to do (exit 0)", outcome.ActionSkipped},
		{"stopped", &machine{version: "1.5.0", installed: true}, "dry run: would repair (exit 0)", outcome.ActionRepaired},
		{"a new binary", &machine{version: "1.5.0", installed: true, running: true, binaryChanged: true}, "dry run: would upgrade (exit 0)", outcome.ActionUpgraded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := config(t)
			cfg.DryRun = true
			o, out := provision(t, context.Background(), cfg, tc.m)
			if !o.Code.IsOK() || o.Action != tc.act || !o.DryRun {
				t.Errorf("%s %v %v", o.Code.Name, o.Action, o.DryRun)
			}
			if !strings.HasSuffix(out, "ctrld-install: "+tc.line+"\n") || !strings.Contains(out, "ctrld-install: plan: ") {
				t.Errorf("output:\n%s", out)
			}
			for _, call := range tc.m.calls {
				if call != "--version" && call != "status" {
					t.Errorf("a dry run ran ctrld %s", call)
				}
			}
			if _, err := os.Stat(cfg.Home); !os.IsNotExist(err) {
				t.Errorf("a dry run made the home: %v", err)
			}
		})
	}
}

// verify that meets a run in progress waits for it, and says so if the run
// outlasts its budget, rather than report a half-made service.
func TestVerifyWaitsForARun(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	cfg.Timeout = time.Minute
	m := &machine{version: "1.5.0"}
	deps := m.deps()
	polls := 0
	deps.LockHeld = func(string) bool {
		polls++
		if polls == 3 {
			m.mu.Lock()
			m.installed, m.running = true, true // the run finished its install
			m.mu.Unlock()
		}
		return polls < 3
	}
	var out bytes.Buffer
	o := Verify(context.Background(), cfg, deps, report.New(&out, &out, nil, false))
	if o.Code.Name != codes.OK {
		t.Errorf("after the run: %s, want OK\n%s", o.Code.Name, out.String())
	}

	deps.LockHeld = func(string) bool { return true }
	deps.Sleep = func(ctx context.Context, d time.Duration) error { return context.DeadlineExceeded }
	out.Reset()
	o = Verify(context.Background(), cfg, deps, report.New(&out, &out, nil, false))
	if o.Code.Name != codes.InstallerBusy || !strings.Contains(out.String(), "error: a ctrld-install run held the home directory's lock") {
		t.Errorf("a run that outlasts verify: %s\n%s", o.Code.Name, out.String())
	}
}

// The budget that runs out while ctrld status is asked after a successful
// start is the time limit (retryable), not a stopped service (fatal).
func TestBudgetSpentDuringTheStatusCheck(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	cfg.Timeout = 300 * time.Millisecond
	m := &machine{version: "1.5.0", starts: []step{ok}}
	deps := m.deps()
	run := deps.Run
	deps.Run = func(ctx context.Context, c runner.Command) (runner.Result, error) {
		if c.Args[0] == "status" && m.count("start ") > 0 {
			<-ctx.Done()
			return runner.Result{ExitCode: -1, TimedOut: true}, nil
		}
		return run(ctx, c)
	}
	var out bytes.Buffer
	o, j := Run(context.Background(), cfg, deps, report.New(&out, &out, nil, false))
	j.Close()
	if o.Code.Name != codes.CtrldTimeout {
		t.Errorf("code = %s, want %s\n%s", o.Code.Name, codes.CtrldTimeout, out.String())
	}
}

// A record write that fails once (a moment's full disk) does not lose the
// final record.
func TestTransientRecordFailureKeepsTheFinalRecord(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	path := filepath.Join(cfg.Home, record.FileName)
	if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
		t.Fatal(err) // a directory in the record's place: the journal's writes fail
	}
	m := &machine{version: "1.5.0", starts: []step{{lines: []string{"NTC Service started"}, installs: true, wait: func(context.Context) {
		wine.RemoveTree(path) // the disk has room again; RemoveAll, under Wine, cannot
	}}}}
	o, out := provision(t, context.Background(), cfg, m)
	if !o.Code.IsOK() {
		t.Fatalf("code %s\n%s", o.Code.Name, out)
	}
	rec, err := record.Read(path)
	if err != nil || rec.Code != codes.OK || rec.Result != record.ResultOK {
		t.Errorf("the final record: %+v, %v\n%s", rec, err, out)
	}
	if n := strings.Count(out, "the outcome record cannot be written"); n != 1 {
		t.Errorf("the write error said %d times, want once:\n%s", n, out)
	}
}

// A restart that failed leaves the new binary unapplied: the next run
// upgrades again, whatever the record says of the version.
func TestFailedUpgradeIsTriedAgain(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	m := &machine{version: "1.5.0", starts: []step{ok}}
	provision(t, context.Background(), cfg, m)
	m.version, m.binaryChanged, m.restart = "1.6.0", true, step{exit: 1}
	if o, _ := provision(t, context.Background(), cfg, m); o.Code.Name != codes.ServiceStartFailed {
		t.Fatalf("the failed restart: %s", o.Code.Name)
	}
	m.restart = step{installs: true}
	o, out := provision(t, context.Background(), cfg, m)
	if o.Action != outcome.ActionUpgraded || !o.Code.IsOK() {
		t.Errorf("the next run: %v %s\n%s", o.Action, o.Code.Name, out)
	}
}

// A device last provisioned by resolver ID was not provisioned with any
// token: a token then is a change. The token is compared even when the
// service definition cannot be read.
func TestTokenAfterResolver(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	m := &machine{version: "1.5.0", starts: []step{ok}} // no definition to read
	cfg.Secret = func(context.Context) (Secret, error) { return Resolver("R1"), nil }
	if o, _ := provision(t, context.Background(), cfg, m); o.Action != outcome.ActionProvisioned {
		t.Fatalf("first: %v", o.Action)
	}
	cfg.Secret = func(context.Context) (Secret, error) { return Token("TOKENONE1234"), nil }
	o, out := provision(t, context.Background(), cfg, m)
	if o.Action != outcome.ActionProvisioned || !strings.Contains(out, "plan: configuration changed: token\n") {
		t.Errorf("a token after a resolver: %v\n%s", o.Action, out)
	}
	if o, _ := provision(t, context.Background(), cfg, m); o.Action != outcome.ActionSkipped {
		t.Errorf("the same token again: %v, want skipped", o.Action)
	}
}

// A failed provisioning stays failed through the runs that provision
// nothing: one killed while ctrld ran, a usage error after it.
func TestFailedProvisioningSurvivesRunsThatProvisionNothing(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	if err := os.MkdirAll(cfg.Home, 0o755); err != nil {
		t.Fatal(err)
	}
	path := record.Path(cfg.Home)
	v := "1.5.0"
	if err := record.Write(path, record.Running(record.CommandInstall, record.PhaseCtrldRunning, 4242, "0.2.0", &v, "", time.Now())); err != nil {
		t.Fatal(err)
	}
	// A healthy-looking service and no token: a provisioning is due, and
	// cannot be done.
	cfg.Secret = func(context.Context) (Secret, error) { return Secret{}, nil }
	m := &machine{version: "1.5.0", installed: true, running: true}
	if o, _ := provision(t, context.Background(), cfg, m); o.Code.Name != codes.InstallerUsage {
		t.Fatalf("code %s, want INSTALLER_USAGE", o.Code.Name)
	}
	rec, err := record.Read(path)
	if err != nil || rec.Provisioning != record.ProvisioningFailed {
		t.Errorf("after the usage error: provisioning %q, %v", rec.Provisioning, err)
	}
	// The command line's own usage error, recorded by UsageJournal.
	j := UsageJournal(cfg.Home, m.deps(), "0.2.0")
	if j == nil {
		t.Fatal("no usage journal")
	}
	o := outcome.Outcome{Command: outcome.Install, Code: codes.Must(codes.InstallerUsage), Source: outcome.SourceInstaller}
	if err := j.WriteFinal(record.FromOutcome(o, "0.2.0")); err != nil {
		t.Fatal(err)
	}
	j.Close()
	rec, err = record.Read(path)
	if err != nil || rec.Provisioning != record.ProvisioningFailed || rec.CtrldVersion == nil || *rec.CtrldVersion != "1.5.0" {
		t.Errorf("after a command-line usage error: %+v, %v", rec, err)
	}
}

// A repair that does not hold with too little time left for an attempt
// ends with the repair's code: no ctrld start cut short.
func TestRepairThatFailsLateDoesNotStart(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	cfg.Timeout = 3 * time.Second // a retry would need half of it
	m := &machine{version: "1.5.0", installed: true, restart: step{wait: func(ctx context.Context) {
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}}}
	o, out := provision(t, context.Background(), cfg, m)
	if o.Code.Name != codes.ServiceNotRunning || o.Action != outcome.ActionRepaired || m.count("start ") != 0 {
		t.Errorf("%s %v, %d starts\n%s", o.Code.Name, o.Action, m.count("start "), out)
	}
}

// A service that starts another ctrld binary than --ctrld: a restart
// would start that other file again, so a run with a token provisions;
// the daemon is compared with the binary its service starts.
func TestAnotherCtrldBinary(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	m := defined(&machine{version: "1.5.0", installed: true, running: true, starts: []step{ok}},
		`/opt/old/ctrld "run" "--iface=auto" "--homedir=/etc/controld" "--cd=R1" "--config=/etc/controld/ctrld.toml"`)
	var compared string
	deps := m.deps()
	deps.DaemonRunsBinary = func(_ context.Context, _, path string) parse.Same { compared = path; return parse.SameYes }
	var out bytes.Buffer
	p := report.New(&out, &out, nil, false)
	o, j := Run(context.Background(), cfg, deps, p)
	report.Emit(p, sinkOf(j), o, "default", cfg.InstallerVersion)
	j.Close()
	if o.Action != outcome.ActionProvisioned || !strings.Contains(out.String(), "plan: configuration changed: ctrld binary\n") {
		t.Errorf("%v\n%s", o.Action, out.String())
	}
	if compared != "/opt/old/ctrld" {
		t.Errorf("the daemon was compared with %q, want the binary its service starts", compared)
	}
}

// Where the device cannot tell which binary the daemon runs, the version
// the last run saw against the one on disk still finds an upgrade; with no
// record, nothing is guessed.
func TestUpgradeWhenTheDeviceCannotTell(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	m := &machine{version: "1.5.0", starts: []step{ok}, restart: step{installs: true}}
	deps := m.deps()
	deps.DaemonRunsBinary = func(context.Context, string, string) parse.Same { return parse.SameUnknown }
	run := func() outcome.Outcome {
		var out bytes.Buffer
		p := report.New(&out, &out, nil, false)
		o, j := Run(context.Background(), cfg, deps, p)
		report.Emit(p, sinkOf(j), o, "default", cfg.InstallerVersion)
		j.Close()
		return o
	}
	if o := run(); o.Action != outcome.ActionProvisioned {
		t.Fatalf("first: %v", o.Action)
	}
	if o := run(); o.Action != outcome.ActionSkipped {
		t.Errorf("the same version: %v, want skipped", o.Action)
	}
	m.mu.Lock()
	m.version = "1.6.0"
	m.mu.Unlock()
	if o := run(); o.Action != outcome.ActionUpgraded {
		t.Errorf("another version on disk: %v, want upgraded", o.Action)
	}
	if o := run(); o.Action != outcome.ActionSkipped {
		t.Errorf("after the upgrade: %v, want skipped", o.Action)
	}
	os.Remove(record.Path(cfg.Home))
	m.mu.Lock()
	m.version = "1.7.0"
	m.mu.Unlock()
	if o := run(); o.Action != outcome.ActionSkipped {
		t.Errorf("no record and nothing to tell: %v, want skipped, not a restart on a guess", o.Action)
	}
}

// A new token's fingerprint that cannot be kept (a full disk) takes the old
// one away: the next run with the new token cannot tell it and leaves the
// healthy service alone, instead of provisioning again on every run. Not
// parallel: it replaces the package's fingerprint writer.
func TestUnwritableFingerprintDoesNotProvisionAgain(t *testing.T) {
	cfg := config(t)
	m := defined(&machine{version: "1.5.0", starts: []step{ok}}, `/ctrld "run" "--iface=auto" "--homedir=/etc/controld" "--cd=R1" "--config=/etc/controld/ctrld.toml"`)
	token := func(v string) { cfg.Secret = func(context.Context) (Secret, error) { return Token(v), nil } }
	token("TOKENONE1234")
	if o, out := provision(t, context.Background(), cfg, m); o.Action != outcome.ActionProvisioned || !o.Code.IsOK() {
		t.Fatalf("first: %v %s\n%s", o.Action, o.Code.Name, out)
	}
	t.Cleanup(func() { rememberToken = store.RememberToken })
	rememberToken = func(string, string) error { return syscall.ENOSPC }
	token("TOKENTWO5678")
	if o, out := provision(t, context.Background(), cfg, m); o.Action != outcome.ActionProvisioned || !o.Code.IsOK() {
		t.Fatalf("another token: %v %s\n%s", o.Action, o.Code.Name, out)
	}
	for i := range 2 {
		if o, out := provision(t, context.Background(), cfg, m); o.Action != outcome.ActionSkipped {
			t.Errorf("run %d with the new token after its fingerprint could not be kept: %v, want skipped\n%s", i+1, o.Action, out)
		}
	}
}

// A panic in the pipeline (here, in what runs ctrld start; in a parser, it
// is raised again on the pipeline's goroutine) ends the run through decide:
// INSTALLER_FAILED with a fixed sentence, the record final, the lock free,
// and nothing of the panic's value anywhere.
func TestPanicEndsTheRunWithItsRecord(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	m := &machine{version: "1.5.0", starts: []step{ok}}
	d := m.deps()
	run := d.Run
	d.Run = func(ctx context.Context, c runner.Command) (runner.Result, error) {
		if len(c.Args) > 0 && c.Args[0] == "start" {
			panic("SECRETCANARY9 in a panic")
		}
		return run(ctx, c)
	}
	var out bytes.Buffer
	p := report.New(&out, &out, nil, false)
	o, j := Run(context.Background(), cfg, d, p)
	report.Emit(p, sinkOf(j), o, "default", cfg.InstallerVersion)
	j.Close()
	if o.Code.Name != codes.InstallerFailed {
		t.Errorf("code %s, want %s\n%s", o.Code.Name, codes.InstallerFailed, out.String())
	}
	if !strings.Contains(out.String(), "ctrld-install: error: an unexpected error stopped the run\n") {
		t.Errorf("no fixed sentence for the panic:\n%s", out.String())
	}
	rec, err := record.Read(record.Path(cfg.Home))
	if err != nil || rec.Code != codes.InstallerFailed || rec.Result == record.ResultRunning {
		t.Errorf("record %+v, %v; want the final INSTALLER_FAILED", rec, err)
	}
	if held, _ := lock.Held(cfg.Home); held {
		t.Error("the home's lock is held after the run")
	}
	b, _ := os.ReadFile(record.Path(cfg.Home))
	if strings.Contains(out.String()+string(b), "SECRETCANARY9") {
		t.Errorf("the panic's value reached a surface:\n%s\n%s", out.String(), b)
	}
}
