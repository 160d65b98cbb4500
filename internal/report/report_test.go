package report

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
)

func fixed() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.FixedZone("X", 3600)) }

func TestTextMode(t *testing.T) {
	var out, errb, log bytes.Buffer
	p := New(&out, &errb, &log, false)
	p.now = fixed
	p.Infof("running ctrld start (attempt %d of %d)", 1, 3)
	p.Errorf("cannot open the log file")
	p.Final(record.NewSummary(codes.Must(codes.ListenerBindFailed)))
	assert.Equal(t, "ctrld-install: running ctrld start (attempt 1 of 3)\n"+
		"ctrld-install: provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)\n"+
		"ctrld-install: next step: "+codes.Must(codes.ListenerBindFailed).NextStep+"\n", out.String())
	assert.Equal(t, "ctrld-install: error: cannot open the log file\n", errb.String())
	assert.Equal(t, "2026-11-29T11:00:00Z ctrld-install: running ctrld start (attempt 1 of 3)\n"+
		"2026-11-29T11:00:00Z ctrld-install: error: cannot open the log file\n"+
		"2026-11-29T11:00:00Z ctrld-install: provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)\n"+
		"2026-11-29T11:00:00Z ctrld-install: next step: "+codes.Must(codes.ListenerBindFailed).NextStep+"\n", log.String())
}

func TestFinalLines(t *testing.T) {
	var out bytes.Buffer
	p := New(&out, &out, nil, false)
	p.Final(record.NewSummary(codes.Must(codes.OK)))
	skipped := record.NewSummary(codes.Must(codes.OK))
	skipped.Action = record.ActionSkipped
	p.Final(skipped)
	assert.Equal(t, "ctrld-install: provisioning succeeded (exit 0)\nctrld-install: already provisioned, nothing to do (exit 0)\n", out.String())
}

// In --json mode stdout holds the object alone; the log keeps the text
// lines and the object.
func TestJSONMode(t *testing.T) {
	var out, errb, log bytes.Buffer
	p := New(&out, &errb, &log, true)
	p.now = fixed
	p.Infof("progress")
	s := record.NewSummary(codes.Must(codes.APIUnreachable))
	p.Final(s)
	var m map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &m))
	assert.Equal(t, "API_UNREACHABLE", m["code"])
	assert.Equal(t, "retryable", m["class"])
	assert.Contains(t, log.String(), "ctrld-install: progress\n")
	assert.Contains(t, log.String(), "code=API_UNREACHABLE (exit 31)\n")
	assert.Contains(t, log.String(), `"code":"API_UNREACHABLE"`)
}

func TestUnknownCodeNeverPrintsItsName(t *testing.T) {
	var out bytes.Buffer
	p := New(&out, &out, nil, false)
	s := record.NewSummary(codes.Must(codes.OK))
	s.Code = "SECRET_TOKEN_VALUE"
	p.Final(s)
	assert.NotContains(t, out.String(), "SECRET")
	assert.Contains(t, out.String(), "code=INSTALLER_FAILED")
}
