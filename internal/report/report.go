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

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
)

// Prefix starts every line ctrld-install prints.
const Prefix = "ctrld-install: "

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

// Errorf prints "ctrld-install: error: <sentence>" on stderr and in the log.
func (p *Printer) Errorf(format string, args ...any) {
	p.line(p.stderr, true, Prefix+"error: "+fmt.Sprintf(format, args...))
}

func (p *Printer) line(w io.Writer, toW bool, s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if toW {
		fmt.Fprintln(w, s)
	}
	if p.log != nil {
		fmt.Fprintf(p.log, "%s %s\n", p.now().UTC().Format(time.RFC3339), s)
	}
}

// FailureLine is the identifier of a failure, the same grammar ctrld prints,
// so one grep finds it on every surface.
func FailureLine(c codes.Code) string {
	return fmt.Sprintf("provisioning failed: stage=%s code=%s (exit %d)", c.Stage, c.Name, c.Exit)
}

// SuccessLine is the final line of a successful run.
const SuccessLine = "provisioning succeeded (exit 0)"

// SkippedLine is the final line of a run that found ctrld healthy.
const SkippedLine = "already provisioned, nothing to do (exit 0)"

// Final prints the run's last lines: in text mode the failure line and the
// registry's next step, or the success line; in --json mode the summary
// object. The log gets the text lines in both modes, and the JSON too.
func (p *Printer) Final(s record.Summary) {
	c, ok := codes.Lookup(s.Code)
	if !ok {
		c = codes.Must(codes.InstallerFailed)
	}
	var lines []string
	switch {
	case c.IsOK() && s.Action == record.ActionSkipped:
		lines = []string{SkippedLine}
	case c.IsOK():
		lines = []string{SuccessLine}
	default:
		lines = []string{FailureLine(c), "next step: " + c.NextStep}
	}
	for _, l := range lines {
		p.line(p.stdout, !p.json, Prefix+l)
	}
	if p.json {
		b, _ := json.Marshal(s)
		p.mu.Lock()
		defer p.mu.Unlock()
		fmt.Fprintf(p.stdout, "%s\n", b)
		if p.log != nil {
			fmt.Fprintf(p.log, "%s %s\n", p.now().UTC().Format(time.RFC3339), b)
		}
	}
}
