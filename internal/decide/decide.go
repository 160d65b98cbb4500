// Package decide turns the evidence of one provisioning attempt into its
// outcome. Decide is a pure function so that every rule of the contract's
// order of evidence can be table-tested without processes or files.
package decide

import (
	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/resultfile"
)

// Source names the kind of evidence that decided an outcome. The values are
// the words of the JSON summary and the outcome record.
type Source string

const (
	SourceInstaller      Source = "installer"
	SourceResultFile     Source = "result-file"
	SourceIdentifierLine Source = "identifier-line"
	SourceExitStatus     Source = "exit-status"
	SourceLegacyOutput   Source = "legacy-output"
	SourcePostConditions Source = "post-conditions"
)

// Evidence is everything known about one attempt.
type Evidence struct {
	// Installer is ctrld-install's own failure, if any: usage, not root,
	// ctrld missing, busy, interrupted, version refused.
	Installer *codes.Code

	ResultFile resultfile.Finding

	// Identifier is the first valid identifier line ctrld printed.
	Identifier *codes.Code

	ExitCode int  // ctrld start's exit status; -1 when it ended by a signal
	TimedOut bool // the time limit stopped ctrld start

	// Legacy is what the classifier of released ctrld output chose.
	Legacy *codes.Code

	Post PostConditions
}

// PostConditions are the checks that turn exit 0 into success.
type PostConditions struct {
	Checked       bool // the checks ran; they do only after exit 0
	ServiceFile   bool // the service definition exists and is a regular file
	StatusRunning bool // ctrld status exited 0 within the budget
}

// Outcome is the decided code and what decided it.
type Outcome struct {
	Code   codes.Code
	Source Source
}

// Decide applies the contract's order of evidence:
//  1. ctrld-install's own failure;
//  2. a trusted, fresh result file, whatever ctrld's exit status;
//  3. a valid identifier line;
//  4. exit 126 (the deactivation PIN), or the time limit;
//  5. the classification of released ctrld's output;
//  6. after exit 0, the post-conditions;
//  7. any other non-zero exit: unclassified.
func Decide(ev Evidence) Outcome {
	o, _ := decide(ev)
	return o
}

// NeedsPostConditions reports whether the outcome of ev depends on the
// post-conditions, so the caller spends no budget on them otherwise.
func NeedsPostConditions(ev Evidence) bool {
	_, need := decide(ev)
	return need
}

func decide(ev Evidence) (o Outcome, needsPost bool) {
	switch {
	case ev.Installer != nil:
		return Outcome{*ev.Installer, SourceInstaller}, false
	case ev.ResultFile.Status == resultfile.Used:
		return Outcome{ev.ResultFile.Code, SourceResultFile}, false
	case ev.Identifier != nil:
		return Outcome{*ev.Identifier, SourceIdentifierLine}, false
	case ev.ExitCode == codes.Must(codes.DeactivationPinRequired).Exit && !ev.TimedOut:
		return Outcome{codes.Must(codes.DeactivationPinRequired), SourceExitStatus}, false
	case ev.TimedOut:
		return Outcome{codes.Must(codes.CtrldTimeout), SourceExitStatus}, false
	case ev.Legacy != nil:
		return Outcome{*ev.Legacy, SourceLegacyOutput}, false
	case ev.ExitCode == 0:
		return postConditions(ev.Post), true
	}
	return Outcome{codes.Must(codes.CtrldFailedUnclassified), SourceExitStatus}, false
}

func postConditions(p PostConditions) Outcome {
	switch {
	case !p.Checked:
		// The caller skipped the checks after exit 0: a bug, never success.
		return Outcome{codes.Must(codes.InstallerFailed), SourceInstaller}
	case !p.ServiceFile:
		return Outcome{codes.Must(codes.ServiceNotRegistered), SourcePostConditions}
	case !p.StatusRunning:
		return Outcome{codes.Must(codes.ServiceNotRunning), SourcePostConditions}
	}
	return Outcome{codes.Must(codes.OK), SourcePostConditions}
}
