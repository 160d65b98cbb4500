// Package status reads the outcome record back for `ctrld-install status`:
// the last outcome, or the state of the home when there is none. A
// "running" journal entry is a run in progress only while a process holds
// the home's lock; otherwise that run was killed.
package status

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"reflect"
	"strings"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/decide"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
)

// How status's lines about a recorded run start after the prefix, spelled
// here where they are printed; explain reads them back.
const (
	LineLastRun = "last run "
	LineNextTry = "the same request is not sent again before "
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

// maxReads bounds the reads of one Load. Each read after the first
// follows a lock found free while the record said "running"; only runs
// that keep replacing each other in that moment need more than two.
const maxReads = 4

// Load reads the record in home. held reports whether a process holds the
// home's lock.
//
// The record is read before the lock is probed, and a run writes its
// outcome and then releases the lock, so a run that ends between the two
// leaves a "running" record with the lock free: it finished, it was not
// killed. When the lock is free the record is therefore read again, and
// only the same "running" entry read twice around a free lock is a killed
// run. A different entry (a run that ended, or a new one that started) is
// judged again the same way.
func Load(home string, held func(home string) bool) Report {
	r, err := record.Read(record.Path(home))
	for range maxReads - 1 {
		if err != nil || r.Result != record.ResultRunning {
			break
		}
		if held(home) {
			return Report{State: Running, Record: r}
		}
		again, againErr := record.Read(record.Path(home))
		if againErr == nil && reflect.DeepEqual(again, r) {
			return interrupted(r)
		}
		r, err = again, againErr
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Report{State: Never}
	case err != nil:
		return Report{State: Invalid}
	case r.Result == record.ResultRunning:
		// Runs kept replacing each other while status looked: one of them
		// is alive.
		return Report{State: Running, Record: r}
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

// interrupted is the report of a run whose journal entry no process holds.
func interrupted(r record.Record) Report {
	// The failure line names the command that was killed.
	cmd := outcome.Install
	if r.Command == record.CommandUninstall {
		cmd = outcome.Uninstall
	}
	return Report{State: Interrupted, Record: r, Outcome: decide.Installer(cmd, codes.InstallerInterrupted)}
}

// Word is the Jamf extension attribute value: a code, or a status word.
func (r Report) Word() string {
	switch r.State {
	case Never:
		return states.NeverRun
	case Invalid:
		return states.InvalidRecord
	case Running:
		return states.Running
	}
	if r.Outcome.Code.IsOK() && r.Outcome.Action == outcome.ActionUninstalled {
		return states.Uninstalled
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

// WriteText writes the report in the line grammar, the code's identifier
// line last, and returns the error of writing it: status is read by
// scripts, and one that got nothing must not be told all went well.
func (r Report) WriteText(w io.Writer) error {
	var b strings.Builder
	line := func(format string, args ...any) {
		b.WriteString(report.Prefix)
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}
	switch r.State {
	case Never:
		line("%s", states.LineNeverRun)
	case Invalid:
		line("%s", states.LineInvalidRecord)
	case Running:
		line("%s%s, pid %d, since %s", states.LineRunning, r.Record.Phase, r.Record.PID, r.Record.Timestamp)
	case Interrupted:
		line("the run of %s was interrupted during phase %s", r.Record.Timestamp, r.Record.Phase)
	default:
		line(LineLastRun+"%s, %d attempt(s), %d ms", r.Record.Timestamp, r.Record.Attempts, r.Record.ElapsedMS)
		if t := r.Outcome.NextTry; !t.IsZero() {
			line(LineNextTry+"%s", t.UTC().Format(time.RFC3339))
		}
	}
	if r.State == Interrupted || r.State == Final {
		for _, l := range r.Outcome.Lines() {
			line("%s", l)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
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
