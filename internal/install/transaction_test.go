package install

import (
	"bytes"
	"sync"

	"context"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/store"
)

// deviceInvalid is ctrld 1.5.0 over a healthy device given a resolver the
// API does not know: it removed the running service before it asked.
var deviceInvalid = step{lines: []string{codes.FailureLine(codes.VerbProvisioning, codes.Must(codes.APIDeviceInvalid))}, exit: 33, removes: true}

func resolverConfig(t *testing.T, id string) Config {
	cfg := config(t)
	cfg.Secret = func(context.Context) (Secret, error) { return Resolver(id), nil }
	cfg.Extra = []string{"--intercept-mode=dns"}
	return cfg
}

// A changed resolver the API refuses takes the healthy service down: it
// is rolled back to the resolver and flags the service held, the run ends
// with the cause, and the same request is not tried again unless forced.
func TestChangeRolledBackAndNotTriedAgain(t *testing.T) {
	t.Parallel()
	cfg := resolverConfig(t, "R2")
	m := defined(&machine{version: "1.5.0", installed: true, running: true, starts: []step{deviceInvalid, ok}}, provisionedR1)
	o, out := provision(t, context.Background(), cfg, m)
	if o.Code.Name != codes.APIDeviceInvalid || o.Action != outcome.ActionRolledBack || o.Rollback != outcome.RollbackOK {
		t.Fatalf("%s %v %q, want API_DEVICE_INVALID rolled back ok\n%s", o.Code.Name, o.Action, o.Rollback, out)
	}
	if !strings.Contains(out, "ctrld-install: rolled back: ctrld 1.5.0 is running again as before\n") {
		t.Errorf("no rolled-back line:\n%s", out)
	}
	if got := m.calls[len(m.calls)-2]; got != "start --cd R1 --intercept-mode=dns" {
		t.Errorf("the rollback ran %q, want the kept resolver and flags", got)
	}
	rec, err := record.Read(record.Path(cfg.Home))
	if err != nil || rec.Action != "rolled-back" || rec.Rollback != "ok" || rec.Code != codes.APIDeviceInvalid {
		t.Errorf("record %+v, %v", rec.Summary, err)
	}
	b, _ := os.ReadFile(filepath.Join(cfg.Home, store.Refused))
	if strings.Contains(string(b), "R2") || strings.Contains(out, "R2") {
		t.Errorf("the refused resolver is written in the clear:\n%s\n%s", b, out)
	}

	// The same request again: nothing stops the healthy service.
	m.starts = []step{deviceInvalid, ok}
	starts := m.count("start")
	o, out = provision(t, context.Background(), cfg, m)
	if o.Code.Name != codes.APIDeviceInvalid || m.count("start") != starts || !strings.Contains(out, "ctrld-install: plan: this configuration was rolled back here before\n") {
		t.Errorf("the refused request again: %s, %d starts\n%s", o.Code.Name, m.count("start")-starts, out)
	}

	// --force tries again.
	cfg.Force = true
	if _, out := provision(t, context.Background(), cfg, m); m.count("start") == starts {
		t.Errorf("--force did not try again:\n%s", out)
	}
	// Another request goes ahead, and what it succeeded with is not refused.
	cfg.Force = false
	cfg.Secret = func(context.Context) (Secret, error) { return Resolver("R3"), nil }
	m.starts = []step{ok}
	if o, out := provision(t, context.Background(), cfg, m); !o.Code.IsOK() || o.Action != outcome.ActionProvisioned {
		t.Errorf("another request: %s %v\n%s", o.Code.Name, o.Action, out)
	}
}

// A change whose failure left the device healthy (ctrld stopped nothing)
// is not rolled back: there is nothing to bring back.
func TestFailedChangeThatStoppedNothing(t *testing.T) {
	t.Parallel()
	cfg := resolverConfig(t, "R2")
	cfg.Retries = 0
	m := defined(&machine{version: "1.5.0", installed: true, running: true, starts: []step{bind}}, provisionedR1)
	o, out := provision(t, context.Background(), cfg, m)
	if o.Code.Name != codes.ListenerBindFailed || o.Action != outcome.ActionProvisioned || o.Rollback != "" {
		t.Errorf("%s %v %q\n%s", o.Code.Name, o.Action, o.Rollback, out)
	}
	if m.count("start") != 1 {
		t.Errorf("%d starts, want the one", m.count("start"))
	}
}

// A change over a healthy device starts only with the time an attempt and
// a rollback need: a run that got the lock late changes nothing and ends
// as the time limit, with no provisioning recorded as attempted.
func TestTransactionNeedsTimeForARollback(t *testing.T) {
	t.Parallel()
	cfg := resolverConfig(t, "R2")
	m := defined(&machine{version: "1.5.0", installed: true, running: true, starts: []step{deviceInvalid, ok}}, provisionedR1)
	// What a run that waited for the lock has left: 5 s of its 5 minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	o, out := provision(t, ctx, cfg, m)
	if o.Code.Name != codes.CtrldTimeout || o.Action != outcome.ActionNone || m.count("start") != 0 {
		t.Errorf("%s %v, %d starts; want CTRLD_TIMEOUT, nothing started\n%s", o.Code.Name, o.Action, m.count("start"), out)
	}
	if slices.ContainsFunc(m.calls, func(c string) bool { return strings.HasPrefix(c, "restart") || strings.HasPrefix(c, "uninstall") }) {
		t.Errorf("ctrld ran %q", m.calls)
	}
	if rec, err := record.Read(record.Path(cfg.Home)); err != nil || rec.Provisioning == record.ProvisioningFailed {
		t.Errorf("the record says a provisioning was attempted: %+v, %v", rec, err)
	}
	// A first provisioning on a device with nothing installed keeps
	// today's rule: it starts with whatever is left.
	m2 := &machine{version: "1.5.0", starts: []step{ok}}
	if o, out := provision(t, ctx, resolverConfig(t, "R2"), m2); !o.Code.IsOK() {
		t.Errorf("a first provisioning with 5 s left: %s\n%s", o.Code.Name, out)
	}
}

// The kept build is trusted only as ctrld-install wrote it: root's, one
// name, writable by nobody else. One that another user could have put
// there or changed is never restored over ctrld.
func TestKeptBuildRefusedWhenOthersCouldWriteIt(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no mode bits; the home's ACL protects the copy there")
	}
	t.Parallel()
	for _, tc := range []struct {
		name  string
		spoil func(t *testing.T, path string)
	}{
		{"writable by others", func(t *testing.T, path string) {
			if err := os.Chmod(path, 0o777); err != nil {
				t.Fatal(err)
			}
		}},
		{"writable by the group", func(t *testing.T, path string) {
			if err := os.Chmod(path, 0o770); err != nil {
				t.Fatal(err)
			}
		}},
		{"another owner", func(t *testing.T, path string) {
			if os.Geteuid() != 0 {
				t.Skip("changing a file's owner needs root")
			}
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}},
		{"a second name", func(t *testing.T, path string) {
			if err := os.Link(path, path+".alias"); err != nil {
				t.Fatal(err)
			}
		}},
		{"a link", func(t *testing.T, path string) {
			other := filepath.Join(filepath.Dir(path), "elsewhere")
			if err := os.Rename(path, other); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, path); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := config(t)
			bin := filepath.Join(t.TempDir(), "ctrld")
			if err := os.WriteFile(bin, []byte("build one"), 0o755); err != nil {
				t.Fatal(err)
			}
			cfg.Ctrld = bin
			m := &machine{version: "1.5.0", starts: []step{ok}}
			if o, out := provision(t, context.Background(), cfg, m); !o.Code.IsOK() {
				t.Fatalf("%s\n%s", o.Code.Name, out)
			}
			r := &run{cfg: cfg, journal: &Journal{}, budget: context.Background()}
			info, ok := r.keptInfo()
			if !ok {
				t.Fatal("no build kept after a verified provisioning")
			}
			tc.spoil(t, filepath.Join(cfg.Home, store.KeptBinary))
			if _, ok := r.keptInfo(); ok {
				t.Errorf("a kept build %s is still trusted", tc.name)
			}
			if err := r.restoreBinary(info.SHA256); err == nil {
				t.Errorf("a kept build %s was restored over ctrld", tc.name)
			}
		})
	}
}

// A forced provisioning of what the device already runs that fails is
// rolled back; the next run asking for the same is no change and skips,
// OK, rather than report the forced run's failure for ever.
func TestForcedSameRequestRolledBackThenSkips(t *testing.T) {
	t.Parallel()
	cfg := resolverConfig(t, "R1")
	cfg.Force = true
	m := defined(&machine{version: "1.5.0", installed: true, running: true, starts: []step{deviceInvalid, ok}}, provisionedR1)
	if o, out := provision(t, context.Background(), cfg, m); o.Action != outcome.ActionRolledBack || o.Rollback != outcome.RollbackOK {
		t.Fatalf("%s %v %q\n%s", o.Code.Name, o.Action, o.Rollback, out)
	}
	cfg.Force = false
	if o, out := provision(t, context.Background(), cfg, m); !o.Code.IsOK() || o.Action != outcome.ActionSkipped {
		t.Errorf("the same request after the forced run was rolled back: %s %v\n%s", o.Code.Name, o.Action, out)
	}
}

// A daemon that never comes up is asked again at growing intervals up to
// the window's end, the last question at the end itself; one that comes
// up is seen at the next question.
func TestSettleAsksAtGrowingIntervals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		upAfter  time.Duration // the daemon runs from then on; 0: never
		want     []time.Duration
		statuses int
	}{
		{"never", 0, []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second, 2 * time.Second, 1250 * time.Millisecond}, 11},
		{"after 1.5 s", 1500 * time.Millisecond, []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := config(t)
			cfg.Settle, cfg.Retries = SettleWindow, 0
			// Registered, not running: the repair restarts it, and the
			// daemon is late or never comes.
			m := &machine{version: "1.5.0", installed: true, starts: []step{{lines: ok.lines}}}
			var mu sync.Mutex
			var elapsed time.Duration
			var waits []time.Duration
			base := time.Now()
			d := m.deps()
			d.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return base.Add(elapsed) }
			d.Sleep = func(ctx context.Context, w time.Duration) error {
				mu.Lock()
				defer mu.Unlock()
				// The repair's window: the fresh start that follows a
				// repair that did not hold has its own.
				if m.count("restart") > 0 && m.count("start") == 0 {
					waits = append(waits, w)
				}
				elapsed += w
				if tc.upAfter > 0 && elapsed >= tc.upAfter {
					m.mu.Lock()
					m.running = true
					m.mu.Unlock()
				}
				return ctx.Err()
			}
			var out bytes.Buffer
			p := report.New(&out, &out, nil, false)
			o, j := Run(context.Background(), cfg, d, p)
			j.Close()
			if !slices.Equal(waits, tc.want) {
				t.Errorf("waits %v, want %v\n%s", waits, tc.want, out.String())
			}
			asked := 0
			for _, c := range m.calls[slices.Index(m.calls, "restart")+1:] {
				if c != "status" {
					break
				}
				asked++
			}
			if asked != tc.statuses {
				t.Errorf("%d status calls after the restart, want %d: %q", asked, tc.statuses, m.calls)
			}
			if healthy := tc.upAfter > 0; o.Code.IsOK() != healthy {
				t.Errorf("%s\n%s", o.Code.Name, out.String())
			}
		})
	}
}
