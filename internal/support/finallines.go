package support

import (
	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
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
// The verbs and lines come from internal/codes and internal/outcome, which
// write them; the grammar after the verb is read by codes.ParseIdentifier.
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
		verb:    codes.VerbProvisioning,
		success: []string{report.Prefix + outcome.LineProvisioned, report.Prefix + outcome.LineSkipped, report.Prefix + outcome.LineUpgraded},
		actions: []string{outcome.ActionProvisioned.String(), outcome.ActionSkipped.String(), outcome.ActionUpgraded.String()},
	},
	{
		command: "uninstall",
		outcome: true,
		verb:    codes.VerbUninstall,
		success: []string{report.Prefix + outcome.LineUninstalled, report.Prefix + outcome.LineNothingToRemove},
		actions: []string{outcome.ActionUninstalled.String()},
	},
	{
		command: "verify",
		outcome: false,
		verb:    codes.VerbVerify,
		success: []string{report.Prefix + outcome.LineVerified},
		others:  []string{report.Prefix + "not installed (exit 54)"},
		actions: []string{outcome.ActionNotInstalled.String()},
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
		out = append(out, marker{[]byte(f.verb + " failed: "), failureMarker})
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
