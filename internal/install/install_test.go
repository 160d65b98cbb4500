package install

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/home"
	"github.com/Control-D-Inc/ctrld-install/internal/lock"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/runner"
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
	m.calls = append(m.calls, strings.Join(c.Args, " "))
	var s step
	switch c.Args[0] {
	case "--version":
		s = step{lines: []string{"ctrld version " + m.version}}
	case "status":
		if !m.running {
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
		m.installed, m.running = true, true
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
		Executable: func(string) bool { return true },
	}
}

var (
	ok         = step{lines: []string{"NTC Service started"}, installs: true}
	unreachble = step{lines: []string{"provisioning failed: stage=bootstrap code=API_UNREACHABLE (exit 31)"}, exit: 31}
	bind       = step{lines: []string{"provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)"}, exit: 41}
)

func config(t *testing.T) Config {
	home := filepath.Join(t.TempDir(), "home")
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
			code: codes.CtrldVersionUnsupported, action: outcome.ActionProvisioned},
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
			code: codes.CtrldVersionUnsupported, action: outcome.ActionProvisioned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := config(t)
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			o, out := provision(t, context.Background(), cfg, tc.m)
			assert.Equal(t, tc.code, o.Code.Name, out)
			assert.Equal(t, tc.action, o.Action)
			assert.Equal(t, tc.attempts, o.Attempts)
			assert.Equal(t, tc.starts, tc.m.count("start "), "runs of ctrld start")
			assert.Equal(t, tc.waits, tc.m.waits)
			assert.NotContains(t, out, "SECRETCANARY9", "the secret never reaches a surface")
			rec, err := record.Read(filepath.Join(cfg.Home, record.FileName))
			require.NoError(t, err)
			assert.Equal(t, tc.code, rec.Code, "the record says what stdout says")
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
		require.NoError(t, os.WriteFile(cfg.ResultFile, []byte(`{"version":1,"timestamp":"2026-08-18T12:00:00Z",`+
			`"stage":"bootstrap","code":"API_UNREACHABLE","exit_code":31,"message":"SECRETCANARY9"}`), 0o600))
	}}
	m := &machine{version: "1.5.0", starts: []step{unreachable, ok}}
	deps := m.deps()
	sleep := deps.Sleep
	deps.Sleep = func(ctx context.Context, d time.Duration) error {
		fi, err := os.Stat(cfg.ResultFile)
		require.NoError(t, err)
		require.NoError(t, os.Chtimes(cfg.ResultFile, fi.ModTime().Add(-d), fi.ModTime().Add(-d)))
		return sleep(ctx, d)
	}

	var out bytes.Buffer
	p := report.New(&out, &out, nil, false)
	o, j := Run(context.Background(), cfg, deps, p)
	report.Emit(p, sinkOf(j), o, "default", cfg.InstallerVersion)
	j.Close()

	assert.Equal(t, codes.OK, o.Code.Name, out.String())
	assert.Equal(t, 2, o.Attempts)
	assert.Equal(t, 2, m.count("start "))
	assert.Equal(t, []time.Duration{10 * time.Second}, m.waits)
	assert.Regexp(t, `^ctrld-install: running ctrld start \(ctrld 1\.5\.0, attempt 1 of 3, time left [0-9ms.]+\)\n`+
		`ctrld-install: attempt 1 failed: stage=bootstrap code=API_UNREACHABLE \(exit 31\); retrying in 10s\n`+
		`ctrld-install: running ctrld start \(ctrld 1\.5\.0, attempt 2 of 3, time left [0-9ms.]+\)\n`+
		`ctrld-install: provisioning succeeded \(exit 0\)\n$`, out.String())
	assert.Equal(t, outcome.FileStale, o.ResultFile, "the first attempt's result file is older than the second attempt")
	assert.NotContains(t, out.String(), "SECRETCANARY9")
	rec, err := record.Read(filepath.Join(cfg.Home, record.FileName))
	require.NoError(t, err)
	assert.Equal(t, codes.OK, rec.Code)
	assert.Equal(t, 2, rec.Attempts)
	assert.Equal(t, "stale", rec.ResultFile)
}

func TestUpgradeAppliesWithRestart(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	m := &machine{version: "1.5.0", starts: []step{ok}, restart: step{installs: true}}
	o, _ := provision(t, context.Background(), cfg, m)
	require.Equal(t, codes.OK, o.Code.Name)

	m.version = "1.6.0" // a package replaced the binary under the running service
	o, out := provision(t, context.Background(), cfg, m)
	assert.Equal(t, codes.OK, o.Code.Name, out)
	assert.Equal(t, outcome.ActionUpgraded, o.Action)
	assert.Equal(t, 1, m.count("restart"))
	assert.Equal(t, 1, m.count("start "), "an upgrade never re-provisions")
	rec, err := record.Read(filepath.Join(cfg.Home, record.FileName))
	require.NoError(t, err)
	assert.Equal(t, "1.6.0", *rec.CtrldVersion)
	assert.Equal(t, "upgraded", rec.Action)

	o, _ = provision(t, context.Background(), cfg, m)
	assert.Equal(t, outcome.ActionSkipped, o.Action, "the same version again is skipped")

	m.version = "1.7.0"
	m.restart = step{exit: 1}
	o, _ = provision(t, context.Background(), cfg, m)
	assert.Equal(t, codes.ServiceStartFailed, o.Code.Name)
	m.version = "1.8.0"
	m.running = true
	m.restart = step{removes: true}
	o, _ = provision(t, context.Background(), cfg, m)
	assert.Equal(t, codes.ServiceNotRegistered, o.Code.Name)
}

func TestInterruptedWhileWaitingToRetry(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := &machine{version: "1.5.0", starts: []step{unreachble}, onSleep: cancel}
	o, _ := provision(t, ctx, config(t), m)
	assert.Equal(t, codes.InstallerInterrupted, o.Code.Name)
	assert.Equal(t, 1, m.count("start "))
}

func TestLockBusyWritesNothing(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	require.NoError(t, os.MkdirAll(cfg.Home, 0o755))
	held, err := lock.Acquire(context.Background(), cfg.Home)
	require.NoError(t, err)
	defer held.Release()
	cfg.Timeout = 300 * time.Millisecond
	m := &machine{version: "1.5.0", starts: []step{ok}}
	var out bytes.Buffer
	o, j := Run(context.Background(), cfg, m.deps(), report.New(&out, &out, nil, false))
	assert.Equal(t, codes.InstallerBusy, o.Code.Name)
	assert.Nil(t, j, "a run without the lock has no journal")
	_, err = os.Stat(filepath.Join(cfg.Home, record.FileName))
	assert.True(t, errors.Is(err, os.ErrNotExist))
	assert.Zero(t, m.count("start "))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg.Timeout = 5 * time.Minute
	o, j = Run(ctx, cfg, m.deps(), report.New(&out, &out, nil, false))
	assert.Equal(t, codes.InstallerInterrupted, o.Code.Name, "interrupted while waiting for the lock")
	assert.Nil(t, j)
}

func TestTooLittleTimeLeftStartsNothing(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	cfg.Timeout = 200 * time.Millisecond
	cfg.Secret = func(context.Context) (Secret, error) {
		time.Sleep(120 * time.Millisecond) // the token arrived late
		return Token("SECRETCANARY9"), nil
	}
	m := &machine{version: "1.5.0", starts: []step{ok}}
	o, out := provision(t, context.Background(), cfg, m)
	assert.Equal(t, codes.CtrldTimeout, o.Code.Name)
	assert.Zero(t, m.count("start "))
	assert.Contains(t, out, "too little of the time limit was left to start ctrld")
}

func TestSecretThatNeverArrives(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	cfg.Timeout = 200 * time.Millisecond
	never, w := io.Pipe() // a standard input that never delivers
	defer w.Close()
	cfg.Secret = Sources{TokenStdin: true, Stdin: never, Getenv: os.Getenv}.Read
	m := &machine{version: "1.5.0", starts: []step{ok}}
	o, out := provision(t, context.Background(), cfg, m)
	assert.Equal(t, codes.InstallerUsage, o.Code.Name)
	assert.Contains(t, out, "before the time limit")
	assert.Zero(t, m.count("start "))

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	cfg.Timeout = time.Minute
	o, _ = provision(t, ctx, cfg, m)
	assert.Equal(t, codes.InstallerInterrupted, o.Code.Name, "a signal while waiting for the token")
}

func TestUninstall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		m        *machine
		code     string
		attempts int
		line     string
	}{
		{"nothing installed", &machine{version: "1.5.0"}, codes.OK, 0, "not installed, nothing to do (exit 0)"},
		{"removed", &machine{version: "1.5.0", installed: true, running: true, uninstall: step{removes: true}}, codes.OK, 1, "uninstall succeeded (exit 0)"},
		{"a PIN is required", &machine{version: "1.5.0", installed: true, running: true, uninstall: step{exit: 126}}, codes.DeactivationPinRequired, 1,
			"uninstall failed: stage=service code=DEACTIVATION_PIN_REQUIRED (exit 126)"},
		{"exit 0 but the service file remains", &machine{version: "1.5.0", installed: true, running: true}, codes.ServiceUninstallFailed, 1,
			"uninstall failed: stage=service code=SERVICE_UNINSTALL_FAILED (exit 56)"},
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
			assert.Equal(t, tc.code, o.Code.Name)
			assert.Equal(t, tc.attempts, o.Attempts)
			assert.True(t, strings.HasSuffix(out.String(), "ctrld-install: "+tc.line+"\n"), out.String())
			rec, err := record.Read(filepath.Join(cfg.Home, record.FileName))
			require.NoError(t, err)
			assert.Equal(t, "uninstalled", rec.Action)
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
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config(t)
			if tc.min != "" {
				cfg.MinVersion = parse.MustParseVersion(tc.min)
			}
			var out bytes.Buffer
			o := Verify(context.Background(), cfg, tc.m.deps(), report.New(&out, &out, nil, false))
			assert.Equal(t, tc.code, o.Code.Name)
			assert.Equal(t, tc.act, o.Action)
			_, err := os.Stat(cfg.Home)
			assert.True(t, os.IsNotExist(err), "verify writes nothing")
		})
	}
}

func TestChildEnvDropsEverySecretVariable(t *testing.T) {
	t.Parallel()
	env := ChildEnv([]string{"PATH=/bin", "HTTPS_PROXY=http://proxy:3128", "CTRLD_PROVISION_TOKEN=a",
		"CTRLD_PROVISION_RESOLVER=b", "CTRLD_DEACTIVATION_PIN=1", "CTRLD_INSTALL_TIMEOUT=5m", "NO_COLOR=0"})
	assert.Equal(t, []string{"PATH=/bin", "HTTPS_PROXY=http://proxy:3128", "NO_COLOR=1"}, env,
		"the caller's proxy reaches ctrld; no secret does")
}
