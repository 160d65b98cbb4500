package install

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

var rejected = step{lines: []string{"provisioning failed: stage=bootstrap code=API_REJECTED (exit 32)"}, exit: 32}

// Ten runs a check-in (15 minutes) apart with a rejected token send it at
// the first run and then only when the pause, doubling, is over; --force
// and another token send it at once.
func TestRequestRefusedForGoodIsPaused(t *testing.T) {
	t.Parallel()
	cfg := config(t)
	cfg.Retries = 0
	cfg.Ctrld = filepath.Join(wine.TempDir(t), "ctrld")
	writeBuild(t, cfg, "build one")
	m := &machine{version: "1.5.0", starts: []step{rejected}}
	base := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	var now time.Time
	d := m.deps()
	d.Now = func() time.Time { return now }
	run := func() (string, string) {
		var out bytes.Buffer
		p := report.New(&out, &out, nil, false)
		o, j := Run(context.Background(), cfg, d, p)
		report.Emit(p, sinkOf(j), o, "default", cfg.InstallerVersion)
		j.Close()
		if o.Code.Name != codes.APIRejected {
			t.Fatalf("%s\n%s", o.Code.Name, out.String())
		}
		return out.String(), o.NextTry.UTC().Format(time.RFC3339)
	}
	var sentAt []time.Duration
	for i := range 10 {
		at := time.Duration(i) * 15 * time.Minute
		now = base.Add(at)
		before := m.count("start")
		out, next := run()
		if m.count("start") > before {
			sentAt = append(sentAt, at)
		} else if !strings.Contains(out, "ctrld-install: plan: the same request was refused for good at its last try (API_REJECTED); it is sent again from "+next+", or now with --force, another request or another ctrld build\n") {
			t.Errorf("run at %s: no plan line with the next try\n%s", at, out)
		}
		rec, err := record.Read(record.Path(cfg.Home))
		if err != nil || rec.NextTry != next {
			t.Errorf("run at %s: the record's next try %q, want %q (%v)", at, rec.NextTry, next, err)
		}
	}
	want := []time.Duration{0, 15 * time.Minute, 45 * time.Minute, 105 * time.Minute}
	if len(sentAt) != len(want) {
		t.Fatalf("sent at %v, want %v", sentAt, want)
	}
	for i := range want {
		if sentAt[i] != want[i] {
			t.Errorf("sent at %v, want %v", sentAt, want)
		}
	}

	before := m.count("start")
	cfg.Force = true
	run()
	cfg.Force = false
	writeBuild(t, cfg, "build two")
	run()
	cfg.Secret = func(context.Context) (Secret, error) { return Token("ANOTHERTOKEN"), nil }
	run()
	if m.count("start") != before+3 {
		t.Errorf("--force, another build and another token did not send at once: %d", m.count("start")-before)
	}
}

func TestPauseAfter(t *testing.T) {
	for n, want := range map[int]time.Duration{1: 15 * time.Minute, 2: 30 * time.Minute, 3: time.Hour, 7: 16 * time.Hour, 8: 24 * time.Hour, 60: 24 * time.Hour} {
		if got := pauseAfter(n); got != want {
			t.Errorf("pauseAfter(%d) = %s, want %s", n, got, want)
		}
	}
}
