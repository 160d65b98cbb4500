package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/platform"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/support"
)

// Words status prints in place of a code when there is no final outcome;
// explain knows them too.
const (
	neverRun      = support.WordNeverRun
	running       = support.WordRunning
	invalidRecord = support.WordInvalidRecord
)

// runStatus prints the last recorded outcome. It exits 0 whenever it could
// say something, including "never run": it reports, it does not judge.
func runStatus(args []string, io stdio) int {
	fs := newFlagSet("ctrld-install status")
	home := fs.String("home", platform.Current.Home, "")
	format := fs.String("format", "text", "")
	p := report.New(io.out, io.err, nil, false)
	if code, done := parseFlags(fs, args, p, io, "status"); done {
		return code
	}
	switch *format {
	case "text", "json", "jamf-ea":
	default:
		return failUsage(p, usagef("--format must be text, json or jamf-ea"))
	}
	r, state := loadRecord(filepath.Join(*home, record.FileName))
	switch *format {
	case "jamf-ea":
		fmt.Fprintf(io.out, "<result>%s</result>\n", state.word(r))
	case "json":
		b, _ := json.Marshal(state.object(r))
		fmt.Fprintf(io.out, "%s\n", b)
	default:
		state.text(p, r)
	}
	return 0
}

type recordState int

const (
	stateFinal recordState = iota
	stateNever
	stateInvalid
	stateRunning
	stateInterrupted
)

// loadRecord reads the record and resolves a journal entry: a "running"
// record whose process is gone is a run that was killed.
func loadRecord(path string) (record.Record, recordState) {
	r, err := record.Read(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return r, stateNever
	case err != nil:
		return r, stateInvalid
	case r.Result == record.ResultRunning && record.InstallerAlive(r.PID):
		return r, stateRunning
	case r.Result == record.ResultRunning:
		return r, stateInterrupted
	}
	return r, stateFinal
}

func (s recordState) word(r record.Record) string {
	switch s {
	case stateNever:
		return neverRun
	case stateInvalid:
		return invalidRecord
	case stateRunning:
		return running
	case stateInterrupted:
		return codes.InstallerInterrupted
	}
	return r.Code
}

// object is the JSON form: the record itself, or one rebuilt from the
// registry for the states that have no final outcome.
func (s recordState) object(r record.Record) any {
	switch s {
	case stateNever, stateInvalid:
		return map[string]any{"version": 1, "result": s.word(r), "code": s.word(r)}
	case stateRunning:
		return r
	case stateInterrupted:
		sum := record.NewSummary(codes.Must(codes.InstallerInterrupted))
		sum.Source = "installer"
		sum.InstallerVersion = r.InstallerVersion
		out := record.New(sum, mustTime(r.Timestamp))
		out.Phase = r.Phase
		return out
	}
	return r
}

func (s recordState) text(p *report.Printer, r record.Record) {
	switch s {
	case stateNever:
		p.Infof("no outcome recorded: ctrld-install has never run here")
	case stateInvalid:
		p.Infof("the outcome record cannot be read")
	case stateRunning:
		p.Infof("a run is in progress: phase %s, pid %d, since %s", r.Phase, r.PID, r.Timestamp)
	case stateInterrupted:
		p.Infof("the run of %s was interrupted during phase %s", r.Timestamp, r.Phase)
		p.Final(record.NewSummary(codes.Must(codes.InstallerInterrupted)))
	default:
		p.Infof("last run %s, %d attempt(s), %d ms", r.Timestamp, r.Attempts, r.ElapsedMS)
		p.Final(r.Summary)
	}
}
