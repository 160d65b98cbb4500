package status

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

const (
	runningA = `{"version":1,"timestamp":"2026-11-30T12:00:00Z","result":"running","stage":"","code":"","exit_code":0,"class":"",` +
		`"source":"","attempts":0,"elapsed_ms":0,"ctrld_version":null,"installer_version":"0.2.0","result_file":"","command":"install","phase":"checking","pid":4242}`
	runningB = `{"version":1,"timestamp":"2026-11-30T12:00:09Z","result":"running","stage":"","code":"","exit_code":0,"class":"",` +
		`"source":"","attempts":0,"elapsed_ms":0,"ctrld_version":null,"installer_version":"0.2.0","result_file":"","command":"install","phase":"started","pid":4343}`
	finalOK = `{"version":1,"timestamp":"2026-11-30T12:00:08Z","result":"ok","action":"provisioned","stage":"","code":"OK",` +
		`"exit_code":0,"class":"ok","source":"post-conditions","attempts":1,"elapsed_ms":5,"ctrld_version":"1.5.0",` +
		`"installer_version":"0.2.0","result_file":"absent"}`
)

// prober plays the lock probe of a world that changes as status looks:
// at each probe it reports whether the lock is held, after writing the
// record the world holds by then.
type prober struct {
	t     *testing.T
	home  string
	steps []step
	n     int
}

type step struct {
	held  bool
	write string // the record once the probe has answered; "" keeps it
}

func (p *prober) held(home string) bool {
	if p.n >= len(p.steps) {
		p.t.Fatalf("probe %d: only %d expected", p.n+1, len(p.steps))
	}
	s := p.steps[p.n]
	p.n++
	if s.write != "" {
		writeRecord(p.t, p.home, s.write)
	}
	return s.held
}

func writeRecord(t *testing.T, home, body string) {
	t.Helper()
	path := filepath.Join(home, "ctrld-install-result.json")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// A run that writes its outcome and releases the lock between status's
// read of the record and its probe of the lock finished: status reads the
// record again and reports the outcome, never INSTALLER_INTERRUPTED. The
// same entry read twice around a free lock is a killed run.
func TestStatusRereadsTheRecordWhenTheLockIsFree(t *testing.T) {
	for _, tc := range []struct {
		name   string
		first  string
		steps  []step
		state  State
		word   string
		probes int
	}{
		{"the run ended between the read and the probe", runningA, []step{{held: false, write: finalOK}}, Final, "OK", 1},
		{"the run holds the lock", runningA, []step{{held: true}}, Running, "RUNNING", 1},
		{"the run was killed", runningA, []step{{held: false}}, Interrupted, "INSTALLER_INTERRUPTED", 1},
		{"the run ended and the next one started", runningA, []step{{held: false, write: runningB}, {held: true}}, Running, "RUNNING", 2},
		{"the run ended, the next one started and was killed", runningA, []step{{held: false, write: runningB}, {held: false}}, Interrupted, "INSTALLER_INTERRUPTED", 2},
		{"runs keep replacing each other", runningA, []step{{held: false, write: runningB}, {held: false, write: runningA}, {held: false, write: runningB}}, Running, "RUNNING", 3},
		{"a final record needs no probe", finalOK, nil, Final, "OK", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := wine.TempDir(t)
			writeRecord(t, home, tc.first)
			p := &prober{t: t, home: home, steps: tc.steps}
			r := Load(home, p.held)
			if r.State != tc.state || r.Word() != tc.word {
				t.Errorf("Load: state %v, word %s; want %v, %s", r.State, r.Word(), tc.state, tc.word)
			}
			if p.n != tc.probes {
				t.Errorf("Load probed the lock %d times, want %d", p.n, tc.probes)
			}
		})
	}
}

// failingWriter is a stdout nobody can write to: a closed pipe, a full disk.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// Every state's text reports a write error rather than dropping it.
func TestStatusTextReportsAWriteError(t *testing.T) {
	for _, body := range []string{"", "not a record", runningA, finalOK} {
		home := wine.TempDir(t)
		if body != "" {
			writeRecord(t, home, body)
		}
		r := Load(home, func(string) bool { return body == runningA })
		if err := r.WriteText(failingWriter{}); err == nil {
			t.Errorf("WriteText of state %v to a failing writer: nil error", r.State)
		}
	}
}
