package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/profile"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
)

func fixed() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.FixedZone("X", 3600)) }

// sink remembers what Emit asked it to keep, and in which order relative
// to the lines.
type sink struct {
	got    []record.Summary
	out    *bytes.Buffer
	before int // bytes on stdout when the record was written
	err    error
}

func (s *sink) WriteFinal(r record.Summary) error {
	s.got = append(s.got, r)
	s.before = s.out.Len()
	return s.err
}

func failure(name string) outcome.Outcome {
	return outcome.Outcome{Command: outcome.Install, Code: codes.Must(name), Source: outcome.SourceLegacyOutput, Action: outcome.ActionProvisioned, Attempts: 1}
}

func TestEmitText(t *testing.T) {
	var out, errb, log bytes.Buffer
	p := New(&out, &errb, &log, false)
	p.now = fixed
	p.Infof("running ctrld start (attempt %d of %d)", 1, 3)
	s := &sink{out: &out}
	code := Emit(p, s, failure(codes.ListenerBindFailed), profile.Default, "0.2.0")
	assert.Equal(t, 41, code)
	next := codes.Must(codes.ListenerBindFailed).NextStep
	assert.Equal(t, "ctrld-install: running ctrld start (attempt 1 of 3)\n"+
		"ctrld-install: next step: "+next+"\n"+
		"ctrld-install: provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)\n", out.String(),
		"the identifier line is the last line")
	assert.Equal(t, "2026-11-29T11:00:00Z ctrld-install: running ctrld start (attempt 1 of 3)\n"+
		"2026-11-29T11:00:00Z ctrld-install: next step: "+next+"\n"+
		"2026-11-29T11:00:00Z ctrld-install: provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)\n", log.String())
	require.Len(t, s.got, 1)
	assert.Equal(t, "LISTENER_BIND_FAILED", s.got[0].Code)
	assert.Equal(t, "legacy-output", s.got[0].Source)
	assert.Equal(t, len("ctrld-install: running ctrld start (attempt 1 of 3)\n"), s.before, "the record is written before the final lines")
}

func TestEmitSuccessLines(t *testing.T) {
	for _, tc := range []struct {
		o    outcome.Outcome
		line string
	}{
		{outcome.Outcome{Command: outcome.Install, Code: codes.Must(codes.OK), Action: outcome.ActionProvisioned}, "provisioning succeeded (exit 0)"},
		{outcome.Outcome{Command: outcome.Install, Code: codes.Must(codes.OK), Action: outcome.ActionSkipped}, "already provisioned, nothing to do (exit 0)"},
		{outcome.Outcome{Command: outcome.Install, Code: codes.Must(codes.OK), Action: outcome.ActionUpgraded}, "upgrade applied, ctrld restarted (exit 0)"},
		{outcome.Outcome{Command: outcome.Verify, Code: codes.Must(codes.OK)}, "verify succeeded (exit 0)"},
		{outcome.Outcome{Command: outcome.Verify, Code: codes.Must(codes.ServiceNotRegistered), Action: outcome.ActionNotInstalled}, "not installed (exit 54)"},
		{outcome.Outcome{Command: outcome.Uninstall, Code: codes.Must(codes.OK), Action: outcome.ActionUninstalled, Attempts: 1}, "uninstall succeeded (exit 0)"},
		{outcome.Outcome{Command: outcome.Uninstall, Code: codes.Must(codes.OK), Action: outcome.ActionUninstalled}, "not installed, nothing to do (exit 0)"},
		{outcome.Outcome{Command: outcome.Uninstall, Code: codes.Must(codes.ServiceUninstallFailed), Action: outcome.ActionUninstalled, Attempts: 1}, "uninstall failed: stage=service code=SERVICE_UNINSTALL_FAILED (exit 56)"},
		{outcome.Outcome{Command: outcome.Verify, Code: codes.Must(codes.ServiceNotRunning)}, "verify failed: stage=service code=SERVICE_NOT_RUNNING (exit 55)"},
	} {
		var out bytes.Buffer
		Emit(New(&out, &out, nil, false), nil, tc.o, profile.Default, "0.2.0")
		lines := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
		assert.Equal(t, "ctrld-install: "+tc.line, string(lines[len(lines)-1]))
	}
}

// In --json mode stdout holds the object alone; the log keeps the text
// lines and the object.
func TestEmitJSON(t *testing.T) {
	var out, errb, log bytes.Buffer
	p := New(&out, &errb, &log, true)
	p.now = fixed
	p.Infof("progress")
	code := Emit(p, nil, failure(codes.APIUnreachable), profile.Intune, "0.2.0")
	assert.Equal(t, 1618, code, "the profile applies in Emit")
	var m map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &m))
	assert.Equal(t, "API_UNREACHABLE", m["code"])
	assert.Equal(t, "retryable", m["class"])
	assert.Equal(t, "provisioned", m["action"])
	assert.Equal(t, "absent", m["result_file"])
	assert.Contains(t, log.String(), "ctrld-install: progress\n")
	assert.Contains(t, log.String(), `"code":"API_UNREACHABLE"`)
	assert.True(t, strings.HasSuffix(log.String(), "ctrld-install: provisioning failed: stage=bootstrap code=API_UNREACHABLE (exit 31)\n"),
		"in --json mode too, the log's last line is the identifier line:\n%s", log.String())
}

type brokenPipe struct{}

func (brokenPipe) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestEmitSurvivesAClosedStdout(t *testing.T) {
	var log bytes.Buffer
	p := New(brokenPipe{}, brokenPipe{}, &log, false)
	s := &sink{out: &bytes.Buffer{}}
	code := Emit(p, s, failure(codes.ListenerBindFailed), profile.Default, "0.2.0")
	assert.Equal(t, 41, code)
	assert.Len(t, s.got, 1)
	assert.Contains(t, log.String(), "code=LISTENER_BIND_FAILED (exit 41)\n")
}

func TestEmitReportsARecordThatCannotBeWritten(t *testing.T) {
	var out, errb bytes.Buffer
	s := &sink{out: &out, err: errors.New("read-only file system")}
	code := Emit(New(&out, &errb, nil, false), s, failure(codes.ListenerBindFailed), profile.Default, "0.2.0")
	assert.Equal(t, 41, code)
	assert.Equal(t, "ctrld-install: error: the outcome record cannot be written in the home directory (--home)\n", errb.String())
	assert.NotContains(t, errb.String(), "read-only", "the error's own text is never printed")
}
