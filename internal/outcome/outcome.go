// Package outcome is how a run of ctrld-install ended, as typed values: the
// registered code, what decided it, what the run did, and what it found of
// ctrld's files. Every surface (exit status, the final lines, --log, the
// outcome record, --json) is a rendering of one Outcome; the JSON words are
// produced here and parsed back here, nowhere else.
package outcome

import (
	"strconv"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
)

// Command is the subcommand whose outcome this is; it picks the words of
// the final line.
type Command int

const (
	Install Command = iota
	Verify
	Uninstall
)

// Verb is the word before "failed:" in the command's failure line.
func (c Command) Verb() string {
	switch c {
	case Verify:
		return codes.VerbVerify
	case Uninstall:
		return codes.VerbUninstall
	}
	return codes.VerbProvisioning
}

// Source says what decided the code.
type Source int

const (
	SourceNone Source = iota
	SourceInstaller
	SourceResultFile
	SourceIdentifierLine
	SourceExitStatus
	SourceLegacyOutput
	SourceServiceLog
	SourcePostConditions
	SourcePlan // install --dry-run: what the plan says
)

var sourceWords = [...]string{"", "installer", "result-file", "identifier-line", "exit-status", "legacy-output", "service-log", "post-conditions", "plan"}

func (s Source) String() string { return sourceWords[s] }

// ParseSource reads a source word back; "" is SourceNone.
func ParseSource(w string) (Source, bool) { return parseWord(sourceWords[:], w, Source(0)) }

// Action is what the run did to the device.
type Action int

const (
	ActionNone         Action = iota // nothing ran: an installer failure before ctrld, or verify
	ActionProvisioned                // ctrld start ran with the token or resolver
	ActionSkipped                    // ctrld was healthy and current: nothing ran
	ActionUpgraded                   // the binary on disk was not the running one: ctrld restart ran
	ActionUninstalled                // ctrld was removed (or there was nothing to remove)
	ActionNotInstalled               // verify found no service definition at all
	ActionRepaired                   // the registered service did not run: ctrld restart brought it back, no token
	// ActionRolledBack: a change or an upgrade over a healthy device failed
	// its verification, and what ran before was brought back (Rollback
	// says whether that held). The outcome's code is the change's cause.
	ActionRolledBack
)

var actionWords = [...]string{"", "provisioned", "skipped", "upgraded", "uninstalled", "not-installed", "repaired", "rolled-back"}

// Rollback words: what bringing a device back came to.
const (
	RollbackOK     = "ok"
	RollbackFailed = "failed"
	// RollbackNone: the run changed a healthy device with nothing kept to
	// bring it back with (its plan line said why).
	RollbackNone = "none"
)

// Lines printed before the final lines of a run that rolled back, fixed
// words and a parsed version.
const (
	LineRolledBackPrefix = "rolled back: "
	LineRollbackFailed   = "rollback failed: the ctrld that ran before could not be brought back"
)

// RolledBackLine is "rolled back: ctrld 1.4.9 is running again as before";
// version is what parse.DisplayVersion writes, "" when unknown.
func RolledBackLine(version string) string {
	if version == "" {
		return LineRolledBackPrefix + "the ctrld that ran before is running again"
	}
	return LineRolledBackPrefix + "ctrld " + version + " is running again as before"
}

func (a Action) String() string { return actionWords[a] }

// ParseAction reads an action word back; "" is ActionNone.
func ParseAction(w string) (Action, bool) { return parseWord(actionWords[:], w, Action(0)) }

// FileState is what was found of a file ctrld writes (the result file, the
// service log).
type FileState int

const (
	FileNone      FileState = iota // not looked at
	FileAbsent                     // no file: the usual case for success and for released ctrld
	FileUsed                       // trusted and fresh: it decided the outcome
	FileStale                      // older than this attempt
	FileUntrusted                  // not a regular file, a link, wrong owner or mode, too large, or rotated
	FileInvalid                    // trusted and fresh, but not a registered ctrld failure
	FileRead                       // read, and decided nothing
)

var fileWords = [...]string{"", "absent", "used", "stale", "untrusted", "invalid", "read"}

func (f FileState) String() string { return fileWords[f] }

// ParseFileState reads a file-state word back; "" is FileNone.
func ParseFileState(w string) (FileState, bool) { return parseWord(fileWords[:], w, FileState(0)) }

func parseWord[T ~int](words []string, w string, _ T) (T, bool) {
	for i, x := range words {
		if x == w {
			return T(i), true
		}
	}
	return 0, false
}

// Outcome is how one run ended.
type Outcome struct {
	Command      Command
	Code         codes.Code
	Source       Source
	Action       Action
	ResultFile   FileState
	ServiceLog   FileState
	Attempts     int
	Elapsed      time.Duration
	CtrldVersion *parse.Version // nil when unknown
	// DryRun: install --dry-run planned Action and did nothing.
	DryRun bool
	// Rollback is RollbackOK or RollbackFailed when Action is
	// ActionRolledBack; RollbackNone for a change made with nothing kept;
	// "" otherwise.
	Rollback string
	// NextTry is when the same request, refused for good, is sent again;
	// zero when nothing is paused.
	NextTry time.Time
}

// ResultNotInstalled is verify's result word on a device with no service
// definition: a state for detection scripts, neither "ok" nor "failed".
const ResultNotInstalled = "not-installed"

// Result is the record's result word.
func (o Outcome) Result() string {
	switch {
	case o.Command == Verify && o.Action == ActionNotInstalled:
		return ResultNotInstalled
	case o.Code.IsOK():
		return "ok"
	}
	return "failed"
}

// Lines are the final text lines, the identifier line last: a tool that
// shows only a script's last line then shows the code.
func (o Outcome) Lines() []string {
	switch {
	case o.Command == Verify && o.Action == ActionNotInstalled:
		return []string{"not installed (exit " + strconv.Itoa(o.Code.Exit) + ")"}
	case o.DryRun && o.Code.IsOK():
		return []string{o.dryRunLine()}
	case o.Code.IsOK():
		return []string{o.successLine()}
	}
	step := o.Code.NextStep
	if o.Command == Uninstall && o.Code.UninstallNextStep != "" {
		step = o.Code.UninstallNextStep
	}
	return []string{"next step: " + step, codes.FailureLine(o.Command.Verb(), o.Code)}
}

// The success lines. Fleet reports count the ones of install and
// uninstall as outcomes; verify's is detection, not an outcome.
const (
	LineProvisioned     = "provisioning succeeded (exit 0)"
	LineSkipped         = "already provisioned, nothing to do (exit 0)"
	LineUpgraded        = "upgrade applied, ctrld restarted (exit 0)"
	LineUninstalled     = "uninstall succeeded (exit 0)"
	LineNothingToRemove = "not installed, nothing to do (exit 0)"
	LineVerified        = "verify succeeded (exit 0)"
	LineRepaired        = "repair applied, ctrld restarted (exit 0)"
	LineDryRunNothing   = "dry run: nothing to do (exit 0)"
	LineDryRunRepair    = "dry run: would repair (exit 0)"
	LineDryRunUpgrade   = "dry run: would upgrade (exit 0)"
	LineDryRunProvision = "dry run: would provision (exit 0)"
)

// DryRunLines are the last lines of install --dry-run: a plan, not an
// outcome, so fleet reports do not count them.
var DryRunLines = []string{LineDryRunNothing, LineDryRunRepair, LineDryRunUpgrade, LineDryRunProvision}

func (o Outcome) dryRunLine() string {
	switch o.Action {
	case ActionRepaired:
		return LineDryRunRepair
	case ActionUpgraded:
		return LineDryRunUpgrade
	case ActionProvisioned:
		return LineDryRunProvision
	}
	return LineDryRunNothing
}

// OutcomeSuccessLines are the success lines that end an install or an
// uninstall.
var OutcomeSuccessLines = []string{LineProvisioned, LineSkipped, LineUpgraded, LineRepaired, LineUninstalled, LineNothingToRemove}

func (o Outcome) successLine() string {
	switch {
	case o.Command == Verify:
		return LineVerified
	case o.Command == Uninstall && o.Attempts == 0:
		return LineNothingToRemove
	case o.Command == Uninstall:
		return LineUninstalled
	case o.Action == ActionSkipped:
		return LineSkipped
	case o.Action == ActionUpgraded:
		return LineUpgraded
	case o.Action == ActionRepaired:
		return LineRepaired
	}
	return LineProvisioned
}
