package support

import (
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
)

// finalLines is what each ctrld-install command writes last, and whether
// that is an outcome summarize counts.
//
// Only commands that change the device report an outcome. verify (and any
// other check) describes what it found: a device checked ten times would
// otherwise be ten outcomes, and a check that finds ctrld missing on a
// device never meant to have it would read as a failed install.
//
// All verbs live in this one table so that when the identifier grammar
// ("stage=%s code=%s (exit %d)") moves to internal/codes as a formatter and
// parser, this and failureTriple are the only places to change. The
// install lines come from the printer; the uninstall and verify lines are
// spelled here until report has constants for them.
var finalLines = []struct {
	command string
	outcome bool
	// verb starts the failure line, "<verb> failed: stage=<stage>
	// code=<CODE> (exit <N>)", which is counted anywhere in a line (after
	// a syslog, --log or Jamf "Script result:" prefix).
	verb string
	// success are the whole lines, prefix included, that mean OK. They
	// must start with the prefix: ctrld's own output says "provisioning
	// succeeded" in other words, and a bare phrase in prose is not a run.
	success []string
	// others are lines the command prints that look like outcomes but are
	// not; listed so the tests can prove they are not counted.
	others []string
	// actions are the outcome record's "action" values for the command.
	actions []string
}{
	{
		command: "install",
		outcome: true,
		verb:    "provisioning",
		success: []string{report.Prefix + report.SuccessLine, report.Prefix + report.SkippedLine},
		actions: []string{record.ActionProvisioned, record.ActionSkipped, "upgraded"},
	},
	{
		command: "uninstall",
		outcome: true,
		verb:    "uninstall",
		success: []string{report.Prefix + "uninstall succeeded (exit 0)", report.Prefix + "not installed, nothing to do (exit 0)"},
		actions: []string{"uninstalled"},
	},
	{
		command: "verify",
		outcome: false,
		verb:    "verify",
		success: []string{report.Prefix + "verify succeeded (exit 0)"},
		others:  []string{report.Prefix + "not installed: "},
	},
}

// markerKind is what a marker found in a line of text starts.
type markerKind int

const (
	failureMarker markerKind = iota // "<verb> failed: stage=", the triple follows
	successMarker                   // a whole success line
	resultMarker                    // "<result>", a code and "</result>" follow
)

type marker struct {
	text []byte
	kind markerKind
}

var (
	resultOpen  = []byte("<result>")
	resultClose = []byte("</result>")
)

// markers are the texts that start an outcome in a line of text, built
// from the outcome commands of finalLines.
var markers = func() []marker {
	var out []marker
	for _, f := range finalLines {
		if !f.outcome {
			continue
		}
		out = append(out, marker{[]byte(f.verb + " failed: stage="), failureMarker})
		for _, s := range f.success {
			out = append(out, marker{[]byte(s), successMarker})
		}
	}
	return append(out, marker{resultOpen, resultMarker})
}()

// outcomeActions are the "action" values of records that are outcomes. A
// record without one is counted too: a usage error's summary has none, and
// neither had records written before actions existed. An action not listed
// is not an outcome, so a check command that one day writes JSON with its
// own action is not counted as an install.
var outcomeActions = func() map[string]bool {
	m := map[string]bool{"": true}
	for _, f := range finalLines {
		for _, a := range f.actions {
			m[a] = f.outcome
		}
	}
	return m
}()
