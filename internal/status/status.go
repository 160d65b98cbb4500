// Package status reads the outcome record back for `ctrld-install status`:
// the last outcome, or the state of the home when there is none. A
// "running" journal entry is a run in progress only while a process holds
// the home's lock; otherwise that run was killed.
package status

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/decide"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/support"
)

// State is what status found.
type State int

const (
	Final       State = iota // a run's outcome
	Never                    // no record
	Invalid                  // a record that is not one ctrld-install wrote
	Running                  // a run holds the lock
	Interrupted              // a journal entry nobody holds: the run was killed
)

// Report is the record and what it means.
type Report struct {
	State   State
	Record  record.Record
	Outcome outcome.Outcome // for Final and Interrupted
}

// Load reads the record in home. held reports whether a process holds the
// home's lock.
func Load(home string, held func(home string) bool) Report {
	r, err := record.Read(record.Path(home))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Report{State: Never}
	case err != nil:
		return Report{State: Invalid}
	case r.Result == record.ResultRunning && held(home):
		return Report{State: Running, Record: r}
	case r.Result == record.ResultRunning:
		// The failure line names the command that was killed.
		cmd := outcome.Install
		if r.Command == record.CommandUninstall {
			cmd = outcome.Uninstall
		}
		return Report{State: Interrupted, Record: r, Outcome: decide.Installer(cmd, codes.InstallerInterrupted)}
	}
	o, ok := r.Summary.Outcome()
	if !ok {
		return Report{State: Invalid}
	}
	if r.Command == record.CommandUninstall {
		o.Command = outcome.Uninstall // a failed removal has no "uninstalled" action to say so
	}
	return Report{State: Final, Record: r, Outcome: o}
}

// Word is the Jamf extension attribute value: a code, or a status word.
func (r Report) Word() string {
	switch r.State {
	case Never:
		return support.WordNeverRun
	case Invalid:
		return support.WordInvalidRecord
	case Running:
		return support.WordRunning
	}
	if r.Outcome.Code.IsOK() && r.Outcome.Action == outcome.ActionUninstalled {
		return support.WordUninstalled
	}
	return r.Outcome.Code.Name
}

// WriteJSON writes the record, or one rebuilt from the registry for the
// states that have no final outcome.
func (r Report) WriteJSON(w io.Writer) error {
	// The installer version is shown as the display rules render it, as
	// ctrld's is: the record's own pre-release text is never repeated.
	r.Record.InstallerVersion = displayVersion(r.Record.InstallerVersion)
	var v any = r.Record
	switch r.State {
	case Never, Invalid:
		v = map[string]any{"version": 1, "result": r.Word(), "code": r.Word()}
	case Interrupted:
		ts, err := time.Parse(time.RFC3339, r.Record.Timestamp)
		if err != nil {
			ts = time.Now()
		}
		rec := record.New(record.FromOutcome(r.Outcome, r.Record.InstallerVersion), ts)
		rec.Attempts, rec.ElapsedMS = 0, 0
		rec.CtrldVersion = r.Record.CtrldVersion
		rec.Phase = r.Record.Phase
		v = rec
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteText prints the report in the line grammar, the code's identifier
// line last.
func (r Report) WriteText(p *report.Printer) {
	switch r.State {
	case Never:
		p.Infof("no outcome recorded: ctrld-install has never run here")
	case Invalid:
		p.Infof("the outcome record cannot be read")
	case Running:
		p.Infof("a run is in progress: phase %s, pid %d, since %s", r.Record.Phase, r.Record.PID, r.Record.Timestamp)
	case Interrupted:
		p.Infof("the run of %s was interrupted during phase %s", r.Record.Timestamp, r.Record.Phase)
		p.Lines(r.Outcome)
	default:
		p.Infof("last run %s, %d attempt(s), %d ms", r.Record.Timestamp, r.Record.Attempts, r.Record.ElapsedMS)
		p.Lines(r.Outcome)
	}
}

func displayVersion(s string) string {
	if s == "" {
		return ""
	}
	v, err := parse.ParseVersion(s)
	if err != nil {
		return ""
	}
	return parse.DisplayVersion(v)
}
