package fleet

import (
	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
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
	// success are the whole lines, prefix included, that end the command
	// without a failure, and successKey what they count as: OK for an
	// install, the state UNINSTALLED for a removal. They must start with
	// the prefix: ctrld's own output says "provisioning succeeded" in
	// other words, and a bare phrase in prose is not a run.
	success    []string
	successKey key
	// others are lines the command prints that look like outcomes but are
	// not; listed so the tests can prove they are not counted.
	others []string
	// actions are the outcome record's "action" values for the command.
	actions []string
}{
	{
		command:    "install",
		outcome:    true,
		verb:       codes.VerbProvisioning,
		success:    []string{report.Prefix + outcome.LineProvisioned, report.Prefix + outcome.LineSkipped, report.Prefix + outcome.LineUpgraded, report.Prefix + outcome.LineRepaired},
		successKey: keyOK,
		// rolled-back has no success line: its record and its last line are
		// the failure that was rolled back.
		actions: []string{outcome.ActionProvisioned.String(), outcome.ActionSkipped.String(), outcome.ActionUpgraded.String(), outcome.ActionRepaired.String(),
			outcome.ActionRolledBack.String()},
	},
	{
		command:    "uninstall",
		outcome:    true,
		verb:       codes.VerbUninstall,
		success:    []string{report.Prefix + outcome.LineUninstalled, report.Prefix + outcome.LineNothingToRemove},
		successKey: keyUninstalled,
		actions:    []string{outcome.ActionUninstalled.String()},
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

var resultClose = []byte("</result>")

// anchors are the texts every outcome in a line of text starts with: the
// prefix of ctrld-install's own lines, the " failed: " of a failure line
// and an extension attribute's "<result>". text1 looks only for these.
var anchors = [...][]byte{
	anchorPrefix: []byte(report.Prefix),
	anchorFailed: []byte(" failed: "),
	anchorResult: []byte("<result>"),
}

const (
	anchorPrefix = iota
	anchorFailed
	anchorResult
)

// failureVerbs are the verbs of the commands whose failure lines are
// outcomes.
var failureVerbs = func() []string {
	var out []string
	for _, f := range finalLines {
		if f.outcome {
			out = append(out, f.verb)
		}
	}
	return out
}()

// prefixedLine is a line of ctrld-install's, after its prefix, that tells
// summarize something: an outcome or state (key, with the action it
// implies), or ctrld's version (version).
type prefixedLine struct {
	text    []byte
	key     key
	action  string
	version bool
}

// prefixedLines are the success lines of the outcome commands, the lines
// status prints where there is no outcome, and the progress line that
// names ctrld's version.
var prefixedLines = func() []prefixedLine {
	var out []prefixedLine
	for _, f := range finalLines {
		if !f.outcome {
			continue
		}
		for i, s := range f.success {
			action := f.actions[min(i, len(f.actions)-1)]
			out = append(out, prefixedLine{text: []byte(s[len(report.Prefix):]), key: f.successKey, action: action})
		}
	}
	return append(out,
		prefixedLine{text: []byte(states.LineNeverRun), key: keyNeverRun},
		prefixedLine{text: []byte(states.LineInvalidRecord), key: keyInvalid},
		prefixedLine{text: []byte(states.LineRunning), key: keyRunning},
		prefixedLine{text: []byte("running ctrld "), version: true},
	)
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
