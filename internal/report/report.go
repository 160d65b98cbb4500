// Package report writes ctrld-install's lines: stdout (which MDM tools
// capture into their installer logs), stderr for errors, the optional --log
// file, and the --json summary.
//
// Callers pass only fixed format strings with registry values, numbers,
// durations and parsed versions as arguments. Nothing read from ctrld's
// output or result file is ever an argument here.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/profile"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
)

// Prefix starts every line ctrld-install prints.
const Prefix = "ctrld-install: "

// How the printer's own lines start after Prefix, spelled here where they
// are printed; explain reads them back.
const (
	LineWaiting = "still waiting for ctrld "
	LineError   = "error: "
)

// Printer writes lines to every surface. The zero value is not usable.
type Printer struct {
	mu     sync.Mutex
	stdout io.Writer
	stderr io.Writer
	log    io.Writer // nil without --log
	json   bool
	now    func() time.Time
}

// New returns a printer. log may be nil.
func New(stdout, stderr, log io.Writer, jsonMode bool) *Printer {
	return &Printer{stdout: stdout, stderr: stderr, log: log, json: jsonMode, now: time.Now}
}

// SetLog starts copying lines to w; nil stops it.
func (p *Printer) SetLog(w io.Writer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.log = w
}

// JSON reports whether the printer is in --json mode.
func (p *Printer) JSON() bool { return p.json }

// Infof prints one progress line on stdout (not in --json mode) and in the log.
func (p *Printer) Infof(format string, args ...any) {
	p.line(p.stdout, !p.json, Prefix+fmt.Sprintf(format, args...))
}

// Waiting prints that a ctrld command is still running: "still waiting for
// ctrld <command> (<elapsed> of <limit>)", both durations to the second.
// command is fixed text (start, restart, uninstall); limit is the time the
// command was given. A progress line, never a failure line.
func (p *Printer) Waiting(command string, elapsed, limit time.Duration) {
	p.Infof(LineWaiting+"%s (%s of %s)", command, elapsed.Round(time.Second), limit.Round(time.Second))
}

// Errorf prints "ctrld-install: error: <sentence>" on stderr and in the log.
func (p *Printer) Errorf(format string, args ...any) {
	p.line(p.stderr, true, Prefix+LineError+fmt.Sprintf(format, args...))
}

// line writes the log first: it is the surface that must survive a
// consumer that closed stdout.
func (p *Printer) line(w io.Writer, toW bool, s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.log != nil {
		fmt.Fprintf(p.log, "%s %s\n", p.now().UTC().Format(time.RFC3339), s)
	}
	if toW {
		fmt.Fprintln(w, s)
	}
}

// LogOnly writes one line to the log alone (the per-run header).
func (p *Printer) LogOnly(format string, args ...any) {
	p.logOnly(Prefix + fmt.Sprintf(format, args...))
}

func (p *Printer) logOnly(s string) { p.line(nil, false, s) }

// Lines prints an outcome's final text lines, the identifier line last.
// Only Emit and status, which reprints a recorded outcome, call it.
func (p *Printer) Lines(o outcome.Outcome) {
	for _, l := range o.Lines() {
		p.line(p.stdout, !p.json, Prefix+l)
	}
}

// Sink keeps the outcome record. The pipeline hands one over only when
// the run held the home's lock: a run that did not must not overwrite the
// holder's journal.
type Sink interface {
	WriteFinal(s record.Summary) error
}

// Emit is the one place a run's outcome reaches its surfaces, in a fixed
// order: the outcome record, then the final lines (in the log, then on
// stdout, the identifier line last) or the --json object. It returns the
// process exit status under the exit profile. Write errors on stdout (a
// closed pipe) change nothing: the record and the log are written first,
// and the status is the code's.
func Emit(p *Printer, sink Sink, o outcome.Outcome, prof profile.Name, installerVersion string) int {
	s := record.FromOutcome(o, installerVersion)
	if sink != nil {
		if err := sink.WriteFinal(s); err != nil {
			p.Errorf("the outcome record cannot be written in the home directory (--home)")
		}
	}
	var obj []byte
	if p.json {
		// The log keeps the object and the text lines, the identifier
		// line last as in every run; stdout gets the object alone.
		obj, _ = json.Marshal(s)
		p.logOnly(string(obj))
	}
	p.Lines(o)
	if p.json {
		p.mu.Lock()
		fmt.Fprintf(p.stdout, "%s\n", obj)
		p.mu.Unlock()
	}
	return profile.ExitStatus(prof, o.Code, o.Action == outcome.ActionSkipped)
}
