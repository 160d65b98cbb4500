package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

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
	if code != 41 {
		t.Errorf("Emit(%s) = %d, want 41", codes.ListenerBindFailed, code)
	}
	next := codes.Must(codes.ListenerBindFailed).NextStep
	if got, want := out.String(), "ctrld-install: running ctrld start (attempt 1 of 3)\n"+
		"ctrld-install: next step: "+next+"\n"+
		"ctrld-install: provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)\n"; got != want {
		t.Errorf("Emit stdout:\n%s\nwant (the identifier line is the last line):\n%s", got, want)
	}
	if got, want := log.String(), "2026-11-29T11:00:00Z ctrld-install: running ctrld start (attempt 1 of 3)\n"+
		"2026-11-29T11:00:00Z ctrld-install: next step: "+next+"\n"+
		"2026-11-29T11:00:00Z ctrld-install: provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)\n"; got != want {
		t.Errorf("Emit log:\n%s\nwant:\n%s", got, want)
	}
	if len(s.got) != 1 {
		t.Fatalf("Emit wrote %d records, want 1", len(s.got))
	}
	if got, want := s.got[0].Code, "LISTENER_BIND_FAILED"; got != want {
		t.Errorf("record code = %q, want %q", got, want)
	}
	if got, want := s.got[0].Source, "legacy-output"; got != want {
		t.Errorf("record source = %q, want %q", got, want)
	}
	if got, want := s.before, len("ctrld-install: running ctrld start (attempt 1 of 3)\n"); got != want {
		t.Errorf("stdout held %d bytes when the record was written, want %d: the record is written before the final lines", got, want)
	}
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
		if got, want := string(lines[len(lines)-1]), "ctrld-install: "+tc.line; got != want {
			t.Errorf("Emit(%s %s, action %q, %d attempts) last line = %q, want %q", tc.o.Command.Verb(), tc.o.Code.Name, tc.o.Action, tc.o.Attempts, got, want)
		}
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
	if code != 1618 {
		t.Errorf("Emit(%s, intune) = %d, want 1618: the profile applies in Emit", codes.APIUnreachable, code)
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, out.Bytes())
	}
	for k, want := range map[string]string{"code": "API_UNREACHABLE", "class": "retryable", "action": "provisioned", "result_file": "absent"} {
		if got := m[k]; got != want {
			t.Errorf("JSON %q = %#v, want %q", k, got, want)
		}
	}
	for _, want := range []string{"ctrld-install: progress\n", `"code":"API_UNREACHABLE"`} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log does not contain %q:\n%s", want, log.String())
		}
	}
	if !strings.HasSuffix(log.String(), "ctrld-install: provisioning failed: stage=bootstrap code=API_UNREACHABLE (exit 31)\n") {
		t.Errorf("in --json mode too, the log's last line is the identifier line:\n%s", log.String())
	}
}

type brokenPipe struct{}

func (brokenPipe) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestEmitSurvivesAClosedStdout(t *testing.T) {
	var log bytes.Buffer
	p := New(brokenPipe{}, brokenPipe{}, &log, false)
	s := &sink{out: &bytes.Buffer{}}
	code := Emit(p, s, failure(codes.ListenerBindFailed), profile.Default, "0.2.0")
	if code != 41 {
		t.Errorf("Emit(%s) = %d, want 41", codes.ListenerBindFailed, code)
	}
	if len(s.got) != 1 {
		t.Errorf("Emit wrote %d records, want 1", len(s.got))
	}
	if want := "code=LISTENER_BIND_FAILED (exit 41)\n"; !strings.Contains(log.String(), want) {
		t.Errorf("log does not contain %q:\n%s", want, log.String())
	}
}

func TestEmitReportsARecordThatCannotBeWritten(t *testing.T) {
	var out, errb bytes.Buffer
	s := &sink{out: &out, err: errors.New("read-only file system")}
	code := Emit(New(&out, &errb, nil, false), s, failure(codes.ListenerBindFailed), profile.Default, "0.2.0")
	if code != 41 {
		t.Errorf("Emit(%s) = %d, want 41", codes.ListenerBindFailed, code)
	}
	if got, want := errb.String(), "ctrld-install: error: the outcome record cannot be written in the home directory (--home)\n"; got != want {
		t.Errorf("stderr = %q, want %q", got, want)
	}
	if strings.Contains(errb.String(), "read-only") {
		t.Errorf("stderr = %q: the error's own text is never printed", errb.String())
	}
}
