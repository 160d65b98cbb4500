// Package decide turns the evidence of a run into its outcome. It is one
// pure function so that the contract's order of precedence lives in one
// place and can be tested as a table.
package decide

import (
	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
)

// Ran is the ctrld command whose evidence this is.
type Ran int

const (
	RanNothing   Ran = iota // verify, the pre-check, or a run that ended before ctrld
	RanStart                // ctrld start
	RanRestart              // ctrld restart, applying an upgrade
	RanUninstall            // ctrld uninstall
	RanPlanOnly             // install --dry-run: the plan was made and nothing done
)

// Evidence is everything a run learnt. Pointers are nil when there is
// nothing of that kind.
type Evidence struct {
	Ran Ran

	// Installer is ctrld-install's own failure: usage, not root, ctrld
	// missing, the lock busy, the version refused, interrupted.
	Installer *codes.Code

	// Refused is the code a rollback ended with, when the plan refused to
	// try the same build or request on this device again.
	Refused *codes.Code

	ResultFile outcome.FileState
	// ResultCode is the trusted, fresh result file's code; set only when
	// ResultFile is FileUsed.
	ResultCode codes.Code

	Identifier *codes.Code // a valid identifier line

	ExitCode int  // the command's exit status; -1 when it ended by a signal
	TimedOut bool // the time limit stopped it

	// UnknownFlag says ctrld refused a flag (cobra's "unknown flag");
	// OwnFlag that ctrld-install added that flag itself rather than the
	// admin after "--".
	UnknownFlag, OwnFlag bool

	Legacy *codes.Code // the classification of released ctrld's output

	ServiceLog *codes.Code // a specific cause found in the daemon's own log

	Post PostConditions
}

// PostConditions are the checks success needs after exit 0, and that an
// uninstall needs to have become false.
type PostConditions struct {
	Checked       bool // the checks ran
	ServiceFile   bool // the service definition exists and is a regular file
	StatusRunning bool // ctrld status exited 0 within the budget
	// TimedOut: the budget ran out while ctrld status was asked, so
	// whether the service runs is not known.
	TimedOut bool
	// Listener: ctrld's first listener was asked a DNS question (a
	// ctrld.toml or --listen names it); Answers: it answered.
	Listener, Answers bool
	// OtherBuild: after a command that should have started it, the daemon
	// that runs is known not to run the binary its service starts: the
	// old daemon kept running and the build on disk was not applied.
	OtherBuild bool
}

// Healthy reports whether the checks ran and held: registered, running,
// and the listener answering where one is known.
func (p PostConditions) Healthy() bool {
	return p.Checked && p.ServiceFile && p.StatusRunning && !p.OtherBuild && (!p.Listener || p.Answers)
}

// Gone reports whether both checks ran and found nothing of the service.
func (p PostConditions) Gone() bool {
	return p.Checked && !p.ServiceFile && !p.StatusRunning && !p.TimedOut
}

// Decide applies the contract's order:
//  1. ctrld-install's own failure;
//  2. a trusted, fresh result file;
//  3. a valid identifier line;
//  4. exit 126: the deactivation PIN, unless ctrld's own words say its PIN
//     check got no answer (pinCheck); but when the time ran out, the time
//     limit, whatever the exit status: ctrld-install's deadline, not a
//     PIN, ended that run;
//  5. exit 0 with the post-conditions holding is success, whatever ctrld
//     warned about on the way (released ctrld prints recovered warnings);
//  6. the classification of released ctrld's output, where a specific
//     cause from the daemon's own log replaces a generic service failure;
//  7. cobra's unknown-flag error: the admin's flag after "--"
//     (INSTALLER_USAGE) or one ctrld-install added, which this ctrld is too
//     old for (CTRLD_VERSION_UNSUPPORTED);
//  8. exit 0: the post-conditions that failed;
//  9. anything else is CTRLD_FAILED_UNCLASSIFIED.
//
// restart and uninstall are judged by their exit status and what they
// leave behind.
func Decide(ev Evidence) (codes.Code, outcome.Source) {
	return decide(ev)
}

// Installer is the outcome of a command that ended on ctrld-install's
// own failure before anything else was learnt (a usage error, or a killed
// run that status finds): evidence like any other, decided here.
func Installer(cmd outcome.Command, name string) outcome.Outcome {
	c := codes.Must(name)
	code, src := Decide(Evidence{Installer: &c})
	return outcome.Outcome{Command: cmd, Code: code, Source: src}
}

func decide(ev Evidence) (codes.Code, outcome.Source) {
	if ev.Installer != nil {
		return *ev.Installer, outcome.SourceInstaller
	}
	if ev.Refused != nil {
		return *ev.Refused, outcome.SourcePlan
	}
	switch ev.Ran {
	case RanPlanOnly:
		return codes.Must(codes.OK), outcome.SourcePlan
	case RanNothing:
		return postConditions(ev.Post)
	case RanRestart:
		return restart(ev)
	case RanUninstall:
		return uninstall(ev)
	}
	switch {
	case ev.ResultFile == outcome.FileUsed:
		return ev.ResultCode, outcome.SourceResultFile
	case ev.Identifier != nil:
		return *ev.Identifier, outcome.SourceIdentifierLine
	case ev.ExitCode == codes.Must(codes.DeactivationPinRequired).Exit && !ev.TimedOut:
		return pinCheck(ev.Legacy)
	case ev.TimedOut:
		return codes.Must(codes.CtrldTimeout), outcome.SourceExitStatus
	case ev.ExitCode == 0 && ev.Post.Healthy():
		return codes.Must(codes.OK), outcome.SourcePostConditions
	case ev.ExitCode == 0 && !ev.Post.Checked:
		// Whatever else ctrld printed, a healthy service would make this a
		// success: the checks decide first.
		return codes.Must(codes.InstallerFailed), outcome.SourceInstaller
	case ev.Legacy != nil && ev.ServiceLog != nil && generic(*ev.Legacy):
		return *ev.ServiceLog, outcome.SourceServiceLog
	case ev.Legacy != nil:
		return *ev.Legacy, outcome.SourceLegacyOutput
	case ev.UnknownFlag && ev.OwnFlag:
		return codes.Must(codes.CtrldVersionUnsupported), outcome.SourceLegacyOutput
	case ev.UnknownFlag:
		return codes.Must(codes.InstallerUsage), outcome.SourceLegacyOutput
	case ev.ExitCode == 0:
		return postConditions(ev.Post)
	}
	return codes.Must(codes.CtrldFailedUnclassified), outcome.SourceExitStatus
}

// pinCheck names an exit 126 of ctrld start or uninstall. Both exit 126
// only from the same deactivation PIN check of the running daemon, which
// runs before anything that prints a fatal about the API or the network
// (those exit 1), so at 126 the
// classifier's API_UNREACHABLE can only come from the PIN check's own
// line: "deactivation pin is invalid" carrying the control client's
// timeout or connection error. The daemon answers that check only after
// asking the Control D API, so no answer means the API did not answer and
// no PIN was refused; ctrld stopped nothing, and a later attempt can
// succeed. Any other 126 is the PIN, whatever ctrld printed.
func pinCheck(legacy *codes.Code) (codes.Code, outcome.Source) {
	if legacy != nil && legacy.Name == codes.APIUnreachable {
		return *legacy, outcome.SourceLegacyOutput
	}
	return codes.Must(codes.DeactivationPinRequired), outcome.SourceExitStatus
}

// generic reports whether c is a failure of the start command that only
// the daemon's own log can explain.
func generic(c codes.Code) bool {
	switch c.Name {
	case codes.ServiceSelfcheckFailed, codes.ServiceStartFailed, codes.ServiceFailed:
		return true
	}
	return false
}

func postConditions(p PostConditions) (codes.Code, outcome.Source) {
	switch {
	case !p.Checked:
		return codes.Must(codes.InstallerFailed), outcome.SourceInstaller
	case !p.ServiceFile:
		return codes.Must(codes.ServiceNotRegistered), outcome.SourcePostConditions
	case p.TimedOut:
		// The time limit, not the service, stopped the check: retryable.
		return codes.Must(codes.CtrldTimeout), outcome.SourceExitStatus
	case !p.StatusRunning:
		return codes.Must(codes.ServiceNotRunning), outcome.SourcePostConditions
	case p.OtherBuild:
		// The service manager did not start the new daemon.
		return codes.Must(codes.ServiceStartFailed), outcome.SourcePostConditions
	case p.Listener && !p.Answers:
		// A daemon that runs and answers nobody protects nobody.
		return codes.Must(codes.ServiceSelfcheckFailed), outcome.SourcePostConditions
	}
	return codes.Must(codes.OK), outcome.SourcePostConditions
}

func restart(ev Evidence) (codes.Code, outcome.Source) {
	switch {
	case ev.TimedOut:
		return codes.Must(codes.CtrldTimeout), outcome.SourceExitStatus
	case ev.ExitCode != 0:
		return codes.Must(codes.ServiceStartFailed), outcome.SourceExitStatus
	case ev.Legacy != nil:
		return *ev.Legacy, outcome.SourceLegacyOutput
	}
	return postConditions(ev.Post)
}

func uninstall(ev Evidence) (codes.Code, outcome.Source) {
	switch {
	case ev.ExitCode == codes.Must(codes.DeactivationPinRequired).Exit && !ev.TimedOut:
		return pinCheck(ev.Legacy)
	case ev.TimedOut:
		return codes.Must(codes.CtrldTimeout), outcome.SourceExitStatus
	case !ev.Post.Checked:
		return codes.Must(codes.InstallerFailed), outcome.SourceInstaller
	case ev.Post.TimedOut:
		return codes.Must(codes.CtrldTimeout), outcome.SourceExitStatus
	case ev.Post.Gone():
		return codes.Must(codes.OK), outcome.SourcePostConditions
	}
	// ctrld 1.5.0 prints an error and still exits 0 when it cannot reach
	// its service: only what is left behind tells.
	return codes.Must(codes.ServiceUninstallFailed), outcome.SourcePostConditions
}
