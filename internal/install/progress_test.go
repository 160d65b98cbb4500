package install

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/runner"
)

// progressDeps calls the progress callback of every command that has one
// twice, at 30 s and 1 min, as the runner would while ctrld runs that long,
// and records which commands had one.
func progressDeps(m *machine, had *[]string) Deps {
	deps := m.deps()
	run := deps.Run
	deps.Run = func(ctx context.Context, c runner.Command) (runner.Result, error) {
		if c.Progress != nil {
			*had = append(*had, c.Args[0])
			c.Progress(30 * time.Second)
			c.Progress(time.Minute)
		}
		return run(ctx, c)
	}
	return deps
}

// start, restart and uninstall say they are still running; --version and
// status, which have short limits of their own, do not.
func TestProgressLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		command string // the one with progress lines
		run     func(t *testing.T, cfg Config, m *machine, deps Deps, p *report.Printer)
		m       func() *machine
	}{
		{"start", "start", func(t *testing.T, cfg Config, m *machine, deps Deps, p *report.Printer) {
			o, j := Run(context.Background(), cfg, deps, p)
			report.Emit(p, sinkOf(j), o, "default", cfg.InstallerVersion)
			j.Close()
		}, func() *machine { return &machine{version: "1.5.0", starts: []step{ok}} }},
		{"restart", "restart", func(t *testing.T, cfg Config, m *machine, deps Deps, p *report.Printer) {
			provision(t, context.Background(), cfg, m) // 1.5.0 installed and recorded
			m.mu.Lock()
			m.version, m.binaryChanged = "1.6.0", true // a new binary under the running daemon
			m.mu.Unlock()
			o, j := Run(context.Background(), cfg, deps, p)
			report.Emit(p, sinkOf(j), o, "default", cfg.InstallerVersion)
			j.Close()
		}, func() *machine { return &machine{version: "1.5.0", starts: []step{ok}, restart: step{installs: true}} }},
		{"uninstall", "uninstall", func(t *testing.T, cfg Config, m *machine, deps Deps, p *report.Printer) {
			cfg.Secret = func(context.Context) (Secret, error) { return PIN(""), nil }
			o, j := Uninstall(context.Background(), cfg, deps, p)
			report.Emit(p, sinkOf(j), o, "default", cfg.InstallerVersion)
			j.Close()
		}, func() *machine {
			return &machine{version: "1.5.0", installed: true, running: true, uninstall: step{removes: true}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := config(t)
			m := tc.m()
			var had []string
			var out bytes.Buffer
			tc.run(t, cfg, m, progressDeps(m, &had), report.New(&out, &out, nil, false))
			if want := []string{tc.command}; !slices.Equal(had, want) {
				t.Errorf("commands with progress lines = %q, want %q", had, want)
			}
			// An upgrade is a change of a healthy device: its limit is the
			// budget less the rollback's reserve.
			limit := "5m0s"
			if tc.command == "restart" {
				limit = (5*time.Minute - rollbackReserve).String()
			}
			want := "ctrld-install: still waiting for ctrld " + tc.command + " (30s of " + limit + ")\n" +
				"ctrld-install: still waiting for ctrld " + tc.command + " (1m0s of " + limit + ")\n"
			if !strings.Contains(out.String(), want) {
				t.Errorf("output:\n%s\nwant the progress lines:\n%s", out.String(), want)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if last := lines[len(lines)-1]; !strings.HasSuffix(last, "(exit 0)") || strings.Contains(last, "still waiting") {
				t.Errorf("last line = %q, want the outcome's", last)
			}
		})
	}
}
