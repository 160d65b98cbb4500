package report_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/fleet"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/profile"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
)

// The progress line is fixed text on stdout and in the log (in the log
// alone with --json), and summarize counts no outcome in it: a run that
// printed it and then failed counts once.
func TestWaitingLine(t *testing.T) {
	var out, errb, log bytes.Buffer
	p := report.New(&out, &errb, &log, false)
	p.Waiting("start", 30*time.Second+400*time.Millisecond, 4*time.Minute+59*time.Second+600*time.Millisecond)
	p.Waiting("uninstall", 90*time.Second, 5*time.Minute)
	want := "ctrld-install: still waiting for ctrld start (30s of 5m0s)\n" +
		"ctrld-install: still waiting for ctrld uninstall (1m30s of 5m0s)\n"
	if got := out.String(); got != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", got, want)
	}
	if errb.Len() != 0 {
		t.Errorf("stderr = %q, want nothing: a progress line is not an error", errb.String())
	}
	if got := strings.Count(log.String(), "still waiting for ctrld"); got != 2 {
		t.Errorf("the log holds %d progress lines, want 2:\n%s", got, log.String())
	}

	c := fleet.NewCounter()
	if err := c.Read(strings.NewReader(out.String() + log.String())); err != nil {
		t.Fatal(err)
	}
	if got := c.Summary().Outcomes; got != 0 {
		t.Errorf("summarize counted %d outcomes in progress lines, want 0", got)
	}
	report.Emit(p, nil, outcome.Outcome{Command: outcome.Install, Code: codes.Must(codes.CtrldTimeout), Action: outcome.ActionProvisioned}, profile.Default, "0.2.0")
	c = fleet.NewCounter()
	if err := c.Read(strings.NewReader(out.String())); err != nil {
		t.Fatal(err)
	}
	if s := c.Summary(); s.Outcomes != 1 || len(s.Rows) != 1 || s.Rows[0].Code.Name != codes.CtrldTimeout {
		t.Errorf("summarize of a run that waited, then timed out: %+v, want one %s", s.Rows, codes.CtrldTimeout)
	}

	var jout, jlog bytes.Buffer
	report.New(&jout, &errb, &jlog, true).Waiting("restart", 30*time.Second, time.Minute)
	if jout.Len() != 0 {
		t.Errorf("--json stdout = %q, want nothing but the JSON object", jout.String())
	}
	if !strings.Contains(jlog.String(), "ctrld-install: still waiting for ctrld restart (30s of 1m0s)\n") {
		t.Errorf("--json log = %q, want the progress line", jlog.String())
	}
}
