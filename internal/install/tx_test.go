package install

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/plan"
	"github.com/Control-D-Inc/ctrld-install/internal/platform"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/store"
	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// device is a machine with a real binary on disk, provisioned and healthy
// on build one with resolver R1, its build kept.
func device(t *testing.T) (Config, *machine) {
	t.Helper()
	cfg := resolverConfig(t, "R1")
	cfg.Ctrld = filepath.Join(wine.TempDir(t), "ctrld")
	writeBuild(t, cfg, "build one")
	m := &machine{version: "1.5.0", starts: []step{ok}, restart: step{installs: true}}
	m.definition = "#!/bin/sh\ncmd=\"" + filepath.ToSlash(cfg.Ctrld) + ` "run" "--cd" "R1" "--intercept-mode=dns"` + "\"\n"
	if o, out := provision(t, context.Background(), cfg, m); !o.Code.IsOK() {
		t.Fatalf("first provisioning: %s\n%s", o.Code.Name, out)
	}
	if _, ok := (&run{cfg: cfg, journal: &Journal{}}).keptInfo(); !ok {
		t.Fatal("no build kept after a verified provisioning")
	}
	m.calls = nil
	return cfg, m
}

func writeBuild(t *testing.T, cfg Config, content string) {
	t.Helper()
	if err := os.WriteFile(cfg.Ctrld, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	// A package's file has its own time: the size alone would not tell.
	later := time.Now().Add(time.Duration(len(content)) * time.Second)
	if err := os.Chtimes(cfg.Ctrld, later, later); err != nil {
		t.Fatal(err)
	}
}

func buildOnDisk(t *testing.T, cfg Config) string {
	t.Helper()
	b, err := os.ReadFile(cfg.Ctrld)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// dying is a package's new build whose daemon dies: ctrld restart exits 0
// (ctrld-1.5.0-restart-dying-build.txt) and nothing runs; the kept build
// restarted comes up.
func dying(t *testing.T, cfg Config, m *machine) {
	t.Helper()
	writeBuild(t, cfg, "build two, dies")
	m.version, m.binaryChanged = "1.6.0", true
	m.restart = step{wait: func(context.Context) {
		m.mu.Lock()
		defer m.mu.Unlock()
		m.running = !strings.Contains(buildOnDisk(t, cfg), "dies")
		m.binaryChanged = false
	}}
}

func txRecord(t *testing.T, cfg Config) record.Record {
	t.Helper()
	rec, err := record.Read(record.Path(cfg.Home))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// A run killed at any step of a transaction is finished by the next run,
// with or without a token: a device that is not healthy gets what ran
// before back, once; a healthy one keeps the change. Killed while it kept
// what runs, nothing was touched.
func TestCutShortFinishedByTheNextRun(t *testing.T) {
	t.Parallel()
	for _, phase := range []string{record.PhaseSnapshot, record.PhaseApplying, record.PhaseVerifying, record.PhaseRollingBack} {
		for _, healthy := range []bool{false, true} {
			for _, token := range []bool{false, true} {
				name := phase
				if healthy {
					name += ", healthy"
				}
				if !token {
					name += ", no token"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					cfg, m := device(t)
					dying(t, cfg, m)
					// What the killed run left: the kept state on disk, the
					// journal at its phase, the service stopped (or not).
					tx := txFile{State: txOpen, Action: "upgrade", Build: hashOf("build one"), Ctrld: "1.5.0", Resolver: "R1", Extra: []string{"--intercept-mode=dns"}}
					r := &run{cfg: cfg, journal: &Journal{}}
					if err := r.writeTx(tx); err != nil {
						t.Fatal(err)
					}
					v := "1.5.0"
					if err := record.Write(record.Path(cfg.Home), record.Running(record.CommandInstall, phase, 4242, "0.2.0", &v, record.ProvisioningOK, time.Now())); err != nil {
						t.Fatal(err)
					}
					if healthy {
						// The killed run had applied a build that works.
						writeBuild(t, cfg, "build two")
						m.running, m.binaryChanged = true, false
					} else {
						m.running = false
					}
					if !token {
						cfg.Secret = func(context.Context) (Secret, error) { return Secret{}, nil }
					}
					o, out := provision(t, context.Background(), cfg, m)
					// Killed at snapshot, the run touched nothing; a device
					// down with a package's new build is then the repair's
					// to bring back.
					if !healthy && phase == record.PhaseSnapshot {
						if o.Action != outcome.ActionRolledBack || strings.Contains(out, "cut short") {
							t.Errorf("%s %v\n%s", o.Code.Name, o.Action, out)
						}
						return
					}
					if !healthy {
						if o.Action != outcome.ActionRolledBack || o.Rollback != outcome.RollbackOK || o.Code.IsOK() {
							t.Errorf("%s %v %q, want rolled back ok with the failure found\n%s", o.Code.Name, o.Action, o.Rollback, out)
						}
						if !strings.Contains(out, "ctrld-install: plan: the last run was cut short while it changed ctrld, and the device is not healthy; bringing back what ran before\n") ||
							!strings.Contains(out, "ctrld-install: rolled back: ctrld 1.5.0 is running again as before\n") {
							t.Errorf("no plan or rolled-back line:\n%s", out)
						}
						if got := buildOnDisk(t, cfg); got != "build one" {
							t.Errorf("the binary on disk is %q, want the kept build", got)
						}
						if rec := txRecord(t, cfg); rec.Action != "rolled-back" || rec.Rollback != "ok" {
							t.Errorf("record %+v", rec.Summary)
						}
						if _, ok := r.readTx(); ok {
							t.Error("the transaction is still open after its rollback")
						}
						// Once: the next run does not roll back again.
						o, out = provision(t, context.Background(), cfg, m)
						if o.Action == outcome.ActionRolledBack {
							t.Errorf("rolled back twice:\n%s", out)
						}
						return
					}
					if o.Action == outcome.ActionRolledBack || strings.Contains(out, "bringing back") {
						t.Errorf("rolled back a device it should not have:\n%s", out)
					}
					if strings.Contains(out, "cut short") != (phase != record.PhaseSnapshot && healthy) {
						t.Errorf("the cut-short line, phase %s:\n%s", phase, out)
					}
					if healthy && (!o.Code.IsOK() || o.Action != outcome.ActionSkipped) {
						t.Errorf("%s %v, want the change kept\n%s", o.Code.Name, o.Action, out)
					}
					// This run did not make the change and found it healthy:
					// that confirms it.
					if _, ok := r.readTx(); ok {
						t.Error("the transaction is still open or on probation")
					}
					if info, _ := r.keptInfo(); healthy && info.SHA256 != hashOf("build two") {
						t.Error("the build found healthy by another run is not the kept one")
					}
				})
			}
		}
	}
}

// SIGTERM (an MDM agent's own limit) while an upgrade applies: the run
// ends interrupted, and the next run brings the kept build back.
func TestSignalWhileApplyingIsFinishedByTheNextRun(t *testing.T) {
	t.Parallel()
	cfg, m := device(t)
	dying(t, cfg, m)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	apply := m.restart.wait
	m.restart.wait = func(c context.Context) { apply(c); cancel() }
	o, out := provision(t, ctx, cfg, m)
	if o.Code.Name != codes.InstallerInterrupted || o.Action == outcome.ActionRolledBack {
		t.Fatalf("%s %v\n%s", o.Code.Name, o.Action, out)
	}
	m.restart.wait = apply
	o, out = provision(t, context.Background(), cfg, m)
	if o.Action != outcome.ActionRolledBack || o.Rollback != outcome.RollbackOK || buildOnDisk(t, cfg) != "build one" || !m.running {
		t.Errorf("%s %v %q, %q on disk\n%s", o.Code.Name, o.Action, o.Rollback, buildOnDisk(t, cfg), out)
	}
	// Verify, between the two runs, would have called it not healthy.
}

// verify reports a transaction cut short as not healthy, and changes
// nothing.
func TestVerifyReportsACutShortChange(t *testing.T) {
	t.Parallel()
	cfg, m := device(t)
	r := &run{cfg: cfg, journal: &Journal{}}
	if err := r.writeTx(txFile{State: txOpen, Action: "upgrade", Build: hashOf("build one")}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o := Verify(context.Background(), cfg, m.deps(), report.New(&out, &out, nil, false))
	if o.Code.Name != codes.InstallerInterrupted || m.count("restart") != 0 {
		t.Errorf("%s, calls %q\n%s", o.Code.Name, m.calls, out.String())
	}
	if _, ok := r.readTx(); !ok {
		t.Error("verify finished the transaction")
	}
}

// A rollback that does not bring the device back says so, once.
func TestRollbackThatFails(t *testing.T) {
	t.Parallel()
	cfg, m := device(t)
	dying(t, cfg, m)
	m.restart.wait = nil // nothing comes up, not even the kept build
	m.restart.exit = 0
	m.running = true
	m.restart = step{wait: func(context.Context) { m.mu.Lock(); m.running = false; m.mu.Unlock() }}
	o, out := provision(t, context.Background(), cfg, m)
	if o.Action != outcome.ActionRolledBack || o.Rollback != outcome.RollbackFailed || o.Code.IsOK() {
		t.Errorf("%s %v %q\n%s", o.Code.Name, o.Action, o.Rollback, out)
	}
	if !strings.Contains(out, "ctrld-install: "+outcome.LineRollbackFailed+"\n") {
		t.Errorf("no rollback-failed line:\n%s", out)
	}
	if m.count("restart") != 2 {
		t.Errorf("%d restarts, want the change's and the rollback's", m.count("restart"))
	}
	if rec := txRecord(t, cfg); rec.Rollback != "failed" {
		t.Errorf("record %+v", rec.Summary)
	}
}

// A change starts only with an attempt's time and the rollback's reserve
// left; the action then never uses the reserve.
func TestTimeRuleAtItsBoundary(t *testing.T) {
	t.Parallel()
	need := min(minAttemptTime, 5*time.Minute/2) + rollbackReserve
	for _, tc := range []struct {
		name   string
		left   time.Duration
		starts bool
	}{
		{"a second short", need - time.Second, false},
		{"a second more", need + time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, m := device(t)
			dying(t, cfg, m)
			var actionLeft time.Duration
			apply := m.restart.wait
			m.restart.wait = func(c context.Context) {
				if d, ok := c.Deadline(); ok && actionLeft == 0 {
					actionLeft = time.Until(d)
				}
				apply(c)
			}
			ctx, cancel := context.WithTimeout(context.Background(), tc.left)
			defer cancel()
			o, out := provision(t, ctx, cfg, m)
			if !tc.starts {
				if o.Code.Name != codes.CtrldTimeout || m.count("restart") != 0 {
					t.Errorf("%s, %d restarts\n%s", o.Code.Name, m.count("restart"), out)
				}
				return
			}
			if m.count("restart") != 2 || o.Rollback != outcome.RollbackOK {
				t.Errorf("%d restarts, rollback %q\n%s", m.count("restart"), o.Rollback, out)
			}
			if actionLeft > tc.left-rollbackReserve {
				t.Errorf("the change had %s, more than the budget less the reserve", actionLeft)
			}
		})
	}
}

// A cause that a rerun may not meet again is not remembered: the next
// run tries the same change again. A fatal one is.
func TestOnlyAFatalCauseRefuses(t *testing.T) {
	t.Parallel()
	unreachableRemoving := step{lines: unreachble.lines, exit: 31, removes: true}
	for _, tc := range []struct {
		name    string
		first   step
		refuses bool
	}{
		{"API_UNREACHABLE", unreachableRemoving, false},
		{"CTRLD_TIMEOUT", step{timeout: true, removes: true}, false},
		{"API_DEVICE_INVALID", deviceInvalid, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, m := device(t)
			cfg.Retries = 0
			cfg.Secret = func(context.Context) (Secret, error) { return Resolver("R2"), nil }
			m.starts = []step{tc.first, ok}
			o, out := provision(t, context.Background(), cfg, m)
			if o.Action != outcome.ActionRolledBack || o.Rollback != outcome.RollbackOK {
				t.Fatalf("%s %v %q\n%s", o.Code.Name, o.Action, o.Rollback, out)
			}
			m.starts = []step{ok}
			m.calls = nil
			o, out = provision(t, context.Background(), cfg, m)
			if refused := strings.Contains(out, "plan: this configuration was rolled back here before"); refused != tc.refuses {
				t.Errorf("refused %v, want %v\n%s", refused, tc.refuses, out)
			}
			if !tc.refuses && (!o.Code.IsOK() || m.count("start --cd R2") != 1) {
				t.Errorf("the change was not tried again: %s %q\n%s", o.Code.Name, m.calls, out)
			}
		})
	}
}

// A new build and a new request at once are two steps: the build under
// the provisioning that runs, then the request. The request failing
// refuses the request only, and leaves the new build running.
func TestBuildAndRequestChangedAtOnce(t *testing.T) {
	t.Parallel()
	cfg, m := device(t)
	writeBuild(t, cfg, "build two")
	m.version, m.binaryChanged = "1.6.0", true
	cfg.Secret = func(context.Context) (Secret, error) { return Resolver("R2"), nil }
	m.starts = []step{deviceInvalid, ok}
	o, out := provision(t, context.Background(), cfg, m)
	if o.Code.Name != codes.APIDeviceInvalid || o.Rollback != outcome.RollbackOK {
		t.Fatalf("%s %q\n%s", o.Code.Name, o.Rollback, out)
	}
	want := []string{"--version", "restart", "start --cd R2 --intercept-mode=dns", "start --cd R1 --intercept-mode=dns"}
	var got []string
	for _, c := range m.calls {
		if c != "status" {
			got = append(got, c)
		}
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("ran %q, want %q\n%s", got, want, out)
	}
	if buildOnDisk(t, cfg) != "build two" {
		t.Errorf("the new build, which verified, was taken back: %q", buildOnDisk(t, cfg))
	}
	// The build is not refused: a change of configuration goes ahead.
	cfg.Secret = func(context.Context) (Secret, error) { return Resolver("R3"), nil }
	m.starts = []step{ok}
	if o, out := provision(t, context.Background(), cfg, m); !o.Code.IsOK() || o.Action != outcome.ActionProvisioned {
		t.Errorf("another request: %s %v\n%s", o.Code.Name, o.Action, out)
	}
}

// A build refused here does not block a change of configuration: the
// kept build goes back on disk, and the request is provisioned with it.
func TestRefusedBuildDoesNotBlockAChangeOfConfiguration(t *testing.T) {
	t.Parallel()
	cfg, m := device(t)
	dying(t, cfg, m)
	if o, out := provision(t, context.Background(), cfg, m); o.Rollback != outcome.RollbackOK {
		t.Fatalf("%s %q\n%s", o.Code.Name, o.Rollback, out)
	}
	writeBuild(t, cfg, "build two, dies")
	m.binaryChanged = true
	cfg.Secret = func(context.Context) (Secret, error) { return Resolver("R2"), nil }
	m.starts = []step{ok}
	o, out := provision(t, context.Background(), cfg, m)
	if !o.Code.IsOK() || o.Action != outcome.ActionProvisioned || buildOnDisk(t, cfg) != "build one" {
		t.Errorf("%s %v, %q on disk\n%s", o.Code.Name, o.Action, buildOnDisk(t, cfg), out)
	}
}

// A change that verified stays on probation: the build it replaced stays
// kept until a later run finds the device healthy with the new one, and a
// later run that finds the daemon down and cannot repair it brings the
// old one back.
func TestProbation(t *testing.T) {
	t.Parallel()
	t.Run("confirmed", func(t *testing.T) {
		t.Parallel()
		cfg, m := device(t)
		writeBuild(t, cfg, "build two")
		m.version, m.binaryChanged = "1.6.0", true
		if o, out := provision(t, context.Background(), cfg, m); o.Action != outcome.ActionUpgraded || !o.Code.IsOK() {
			t.Fatalf("%s %v\n%s", o.Code.Name, o.Action, out)
		}
		r := &run{cfg: cfg, journal: &Journal{}}
		if info, _ := r.keptInfo(); info.SHA256 != hashOf("build one") {
			t.Error("the kept build was replaced by one no later run has seen healthy")
		}
		if o, out := provision(t, context.Background(), cfg, m); o.Action != outcome.ActionSkipped {
			t.Fatalf("%s %v\n%s", o.Code.Name, o.Action, out)
		}
		if info, _ := r.keptInfo(); info.SHA256 != hashOf("build two") {
			t.Error("a later healthy run did not confirm the new build")
		}
		if _, ok := r.onProbation(); ok {
			t.Error("still on probation")
		}
	})
	t.Run("dies later", func(t *testing.T) {
		t.Parallel()
		cfg, m := device(t)
		writeBuild(t, cfg, "build two")
		m.version, m.binaryChanged = "1.6.0", true
		if o, out := provision(t, context.Background(), cfg, m); o.Action != outcome.ActionUpgraded {
			t.Fatalf("%s %v\n%s", o.Code.Name, o.Action, out)
		}
		// An hour later the new build's daemon is gone, and restarting it
		// does not hold.
		m.running = false
		m.restart = step{wait: func(context.Context) {
			m.mu.Lock()
			defer m.mu.Unlock()
			m.running = buildOnDisk(t, cfg) == "build one"
		}}
		o, out := provision(t, context.Background(), cfg, m)
		if o.Action != outcome.ActionRolledBack || o.Rollback != outcome.RollbackOK || buildOnDisk(t, cfg) != "build one" {
			t.Errorf("%s %v %q, %q on disk\n%s", o.Code.Name, o.Action, o.Rollback, buildOnDisk(t, cfg), out)
		}
		if m.count("start") != 0 {
			t.Errorf("provisioned: %q", m.calls)
		}
	})
}

// A copy of the binary that the budget cannot hold is not made: the change
// says it cannot be rolled back, and why.
func TestKeepBoundedByTheBudget(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	cfg.Ctrld = filepath.Join(wine.TempDir(t), "ctrld")
	if err := os.WriteFile(cfg.Ctrld, bytes.Repeat([]byte{1}, 3<<20), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(cfg.Home, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := &run{cfg: cfg, journal: &Journal{}, budget: ctx}
	_, err := r.keepBuild()
	if err == nil || keepFailure(err) != "the ctrld binary could not be copied within the time limit" {
		t.Errorf("%v: %q", err, keepFailure(err))
	}
	entries, _ := os.ReadDir(cfg.Home)
	for _, e := range entries {
		t.Errorf("left %s in the home", e.Name())
	}
}

// The next run removes the temporary files a killed run left, and nothing
// else.
func TestTemporariesRemovedByTheNextRun(t *testing.T) {
	t.Parallel()
	cfg, m := device(t)
	left := []string{filepath.Join(cfg.Home, store.TmpPrefix+"0123456789abcdef.tmp"), filepath.Join(filepath.Dir(cfg.Ctrld), store.TmpPrefix+"fedcba9876543210.tmp")}
	kept := filepath.Join(filepath.Dir(cfg.Ctrld), "ctrld.toml")
	for _, p := range append(left, kept) {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	provision(t, context.Background(), cfg, m)
	for _, p := range left {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there", filepath.Base(p))
		}
	}
	if _, err := os.Stat(kept); err != nil {
		t.Error("removed a file that is not ctrld-install's")
	}
}

// A daemon that runs but whose listener does not answer is restarted, and
// never provisioned again: the evidence is DNS alone.
func TestSilentDaemonIsRestartedNeverStarted(t *testing.T) {
	t.Parallel()
	wine.Skip(t, wine.NoUDP)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close() // nothing answers there: a closed port refuses at once
	cfg := resolverConfig(t, "R1")
	cfg.Extra = append(cfg.Extra, "--listen", addr)
	m := &machine{version: "1.5.0", installed: true, running: true, starts: []step{ok}, restart: step{}}
	m.definition = "#!/bin/sh\ncmd=\"/ctrld \"run\" \"--cd\" \"R1\" \"--intercept-mode=dns\" \"--listen\" \"" + addr + "\"\"\n"
	cfg.Settle = 0
	o, out := provision(t, context.Background(), cfg, m)
	if o.Code.Name != codes.ServiceSelfcheckFailed || m.count("restart") != 1 || m.count("start") != 0 {
		t.Errorf("%s, calls %q\n%s", o.Code.Name, m.calls, out)
	}
	if !strings.Contains(out, "ctrld-install: plan: the service runs but its listener does not answer\n") {
		t.Errorf("no plan line:\n%s", out)
	}
}

// Another resolver on ctrld's address answers ctrld.test. as it answers
// any name: that is not ctrld's health, and a build that verified only
// that way would not be kept.
func TestAnotherResolverOnTheListenerIsNotCtrld(t *testing.T) {
	t.Parallel()
	wine.Skip(t, wine.NoUDP)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	// Ends when the test closes the socket.
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			r := append([]byte(nil), buf[:n]...)
			r[2], r[3] = 0x81, 0x83 // a response, NXDOMAIN
			_, _ = pc.WriteTo(r, from)
		}
	}()
	addr := pc.LocalAddr().String()
	cfg := resolverConfig(t, "R1")
	cfg.Extra = append(cfg.Extra, "--listen", addr)
	cfg.Settle = 0
	m := &machine{version: "1.5.0", installed: true, running: true, restart: step{}}
	m.definition = "#!/bin/sh\ncmd=\"/ctrld \"run\" \"--cd\" \"R1\" \"--intercept-mode=dns\" \"--listen\" \"" + addr + "\"\"\n"
	var out bytes.Buffer
	o := Verify(context.Background(), cfg, m.deps(), report.New(&out, &out, nil, false))
	if o.Code.Name != codes.ServiceSelfcheckFailed {
		t.Errorf("verify: %s\n%s", o.Code.Name, out.String())
	}
	// ctrld 1.2.1 cannot say it is ctrld: any answer is its.
	m.version = "v1.2.1-0c99d27"
	out.Reset()
	if o := Verify(context.Background(), cfg, m.deps(), report.New(&out, &out, nil, false)); !o.Code.IsOK() {
		t.Errorf("verify of 1.2.1: %s\n%s", o.Code.Name, out.String())
	}
}

// An uninstall that held removes what ctrld-install kept in ctrld's home:
// the kept build and its info, the transaction, the refusals, the pause
// and the fingerprint.
func TestUninstallRemovesThePrivateFiles(t *testing.T) {
	t.Parallel()
	cfg, m := device(t)
	for _, n := range []string{store.Tx, store.Refused, store.Pause, store.Fingerprint} {
		if err := os.WriteFile(filepath.Join(cfg.Home, n), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m.uninstall = step{removes: true}
	var out bytes.Buffer
	p := report.New(&out, &out, nil, false)
	cfg.Secret = func(context.Context) (Secret, error) { return PIN(""), nil }
	o, j := Uninstall(context.Background(), cfg, m.deps(), p)
	j.Close()
	if !o.Code.IsOK() {
		t.Fatalf("%s\n%s", o.Code.Name, out.String())
	}
	for _, n := range store.Names() {
		if _, err := os.Stat(filepath.Join(cfg.Home, n)); err == nil {
			t.Errorf("%s is left in the home", n)
		}
	}
	if _, err := os.Stat(record.Path(cfg.Home)); err != nil {
		t.Errorf("the outcome record is gone too: %v", err)
	}
}

const fakeSystemctl = "/systemctl"

// Under systemd, a unit waiting out its RestartSec after its daemon died
// is not running, whatever ctrld status says, and its repair is systemd's
// own restart, which does not wait the 120 s out
// (ctrld-1.5.0-systemd-status-killed.txt, systemd-252-auto-restart.txt).
func TestSystemdHeldRestartIsRepairedBySystemd(t *testing.T) {
	t.Parallel()
	for _, token := range []bool{false, true} {
		t.Run(map[bool]string{false: "no token", true: "token"}[token], func(t *testing.T) {
			t.Parallel()
			cfg := resolverConfig(t, "R1")
			cfg.ServiceFile = "/etc/systemd/system/ctrld.service"
			if !token {
				cfg.Secret = func(context.Context) (Secret, error) { return Secret{}, nil }
			}
			m := defined(&machine{version: "1.5.0", installed: true, heldRestart: true, restart: step{wait: func(context.Context) { time.Sleep(time.Hour) }}}, provisionedR1)
			d := m.deps()
			d.Systemd = func(string) (platform.Systemd, bool) {
				return platform.Systemd{Systemctl: fakeSystemctl, Unit: "ctrld.service"}, true
			}
			var out bytes.Buffer
			p := report.New(&out, &out, nil, false)
			o, j := Run(context.Background(), cfg, d, p)
			report.Emit(p, sinkOf(j), o, "default", cfg.InstallerVersion)
			j.Close()
			if !o.Code.IsOK() || o.Action != outcome.ActionRepaired {
				t.Errorf("%s %v\n%s", o.Code.Name, o.Action, out.String())
			}
			if m.count("systemctl restart ctrld.service") != 1 || m.count("restart") != 0 || m.count("start") != 0 {
				t.Errorf("calls %q", m.calls)
			}
			if !strings.Contains(out.String(), "ctrld-install: plan: the service is registered but not running") {
				t.Errorf("no plan line:\n%s", out.String())
			}
		})
	}
}

// A package that put a new build down and restarted the service itself (the
// MSI, the pkg) leaves a device that is down, not a change ctrld-install
// made: the repair onto that build that does not hold brings the kept
// build back, provisions nothing, and refuses the build.
func TestRepairOntoAPackagesBuildIsRolledBack(t *testing.T) {
	t.Parallel()
	cfg, m := device(t)
	dying(t, cfg, m)
	m.running, m.binaryChanged = false, false // the package restarted it; it died
	o, out := provision(t, context.Background(), cfg, m)
	if o.Action != outcome.ActionRolledBack || o.Rollback != outcome.RollbackOK || buildOnDisk(t, cfg) != "build one" {
		t.Errorf("%s %v %q, %q on disk\n%s", o.Code.Name, o.Action, o.Rollback, buildOnDisk(t, cfg), out)
	}
	if m.count("start") != 0 {
		t.Errorf("provisioned over it: %q", m.calls)
	}
	// The package's build again: put back, nothing restarted.
	writeBuild(t, cfg, "build two, dies")
	m.calls = nil
	o, out = provision(t, context.Background(), cfg, m)
	if !strings.Contains(out, "plan: this ctrld build was rolled back here before") || m.count("restart") != 0 || buildOnDisk(t, cfg) != "build one" {
		t.Errorf("%s %q\n%s", o.Code.Name, m.calls, out)
	}
}

// A change of a healthy device with nothing kept to bring it back says so
// on a plan line and in the record, and goes ahead.
func TestChangeThatCannotBeRolledBackSaysSo(t *testing.T) {
	t.Parallel()
	cfg := resolverConfig(t, "R1")
	cfg.Ctrld = filepath.Join(wine.TempDir(t), "ctrld")
	writeBuild(t, cfg, "build two")
	// Provisioned before ctrld-install: nothing kept, and a package has
	// replaced the binary under the daemon.
	m := &machine{version: "1.6.0", installed: true, running: true, binaryChanged: true, restart: step{installs: true}}
	m.definition = "#!/bin/sh\ncmd=\"" + filepath.ToSlash(cfg.Ctrld) + ` "run" "--cd" "R1" "--intercept-mode=dns"` + "\"\n"
	o, out := provision(t, context.Background(), cfg, m)
	if !o.Code.IsOK() || o.Action != outcome.ActionUpgraded || o.Rollback != outcome.RollbackNone {
		t.Errorf("%s %v %q\n%s", o.Code.Name, o.Action, o.Rollback, out)
	}
	if !strings.Contains(out, "ctrld-install: plan: this change cannot be rolled back: the ctrld build that runs was replaced on disk before it was kept\n") {
		t.Errorf("no plan line:\n%s", out)
	}
	if rec := txRecord(t, cfg); rec.Rollback != "none" {
		t.Errorf("record %+v", rec.Summary)
	}

	// The same with a build that fails: no rollback is claimed, and the
	// next run finds no change of its own to finish.
	writeBuild(t, cfg, "build three, dies")
	m.version, m.binaryChanged, m.running = "1.7.0", true, true
	m.restart = step{wait: func(context.Context) { m.mu.Lock(); m.running = false; m.mu.Unlock() }}
	cfg.Home = filepath.Join(wine.TempDir(t), "other-home") // nothing kept there
	o, out = provision(t, context.Background(), cfg, m)
	if o.Code.IsOK() || o.Action == outcome.ActionRolledBack || o.Rollback != outcome.RollbackNone {
		t.Errorf("%s %v %q\n%s", o.Code.Name, o.Action, o.Rollback, out)
	}
	if _, ok := (&run{cfg: cfg, journal: &Journal{}}).readTx(); ok {
		t.Error("a change that could not be rolled back is left open for the next run")
	}
}

// A retry inside a change must leave the rollback's reserve whole: with
// too little left for a wait and an attempt inside the change's own
// deadline, the change is not tried again but rolled back.
func TestTimeRuleAtRetry(t *testing.T) {
	t.Parallel()
	unreachableRemoving := step{lines: unreachble.lines, exit: 31, removes: true}
	for _, tc := range []struct {
		name    string
		left    time.Duration
		retries bool
	}{
		{"no room for a retry", rollbackReserve + 20*time.Second, false},
		{"room for a retry", 5 * time.Minute, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, m := device(t)
			cfg.Secret = func(context.Context) (Secret, error) { return Resolver("R2"), nil }
			m.starts = []step{unreachableRemoving, ok}
			m.calls = nil
			ctx, cancel := context.WithTimeout(context.Background(), tc.left)
			defer cancel()
			o, out := provision(t, ctx, cfg, m)
			tried := m.count("start --cd R2")
			if retried := tried > 1; retried != tc.retries {
				t.Errorf("%d attempts of the change\n%s", tried, out)
			}
			if !tc.retries && (o.Rollback != outcome.RollbackOK || m.count("start --cd R1") != 1) {
				t.Errorf("%s %v %q, calls %q\n%s", o.Code.Name, o.Action, o.Rollback, m.calls, out)
			}
		})
	}
}

// A restart onto a build whose daemon dies, that leaves the old daemon
// running (its stop was slow): nothing runs to bring back, but the refused
// build is not left on disk for the next boot to start, and is refused.
func TestFailedRestartThatLeftTheOldDaemon(t *testing.T) {
	t.Parallel()
	cfg, m := device(t)
	writeBuild(t, cfg, "build two, dies")
	m.version, m.binaryChanged = "1.6.0", true
	m.restart = step{lines: []string{"Dec  2 00:36:38.283 ERR Service restart failed"}}
	o, out := provision(t, context.Background(), cfg, m)
	if o.Code.Name != codes.ServiceStartFailed || o.Action != outcome.ActionRolledBack || o.Rollback != outcome.RollbackOK {
		t.Errorf("%s %v %q\n%s", o.Code.Name, o.Action, o.Rollback, out)
	}
	if got := buildOnDisk(t, cfg); got != "build one" {
		t.Errorf("%q on disk, want the kept build back", got)
	}
	if m.count("restart") != 1 {
		t.Errorf("%d restarts: the old daemon runs, nothing to restart", m.count("restart"))
	}
	writeBuild(t, cfg, "build two, dies")
	m.calls = nil
	if _, out := provision(t, context.Background(), cfg, m); !strings.Contains(out, "plan: "+plan.ReasonRefusedBuild) || m.count("restart") != 0 {
		t.Errorf("the same build again: %q\n%s", m.calls, out)
	}
}
