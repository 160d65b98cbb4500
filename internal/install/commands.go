package install

import (
	"context"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/decide"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
)

// Verify checks now what success requires, starting and changing nothing.
// It needs the same privileges as install, because ctrld status does. A
// device with no service definition is "not installed": a state for the
// detection scripts, not a provisioning failure. With --min-version it
// judges the daemon that runs, not the file on disk: a newer binary that
// no service has started yet is not compliant.
func Verify(ctx context.Context, cfg Config, deps Deps, out *report.Printer) outcome.Outcome {
	r, cancel := newRun(ctx, outcome.Verify, cfg, deps, out)
	defer cancel()
	defer r.cleanupWorkDir()
	ev, err := r.guard(r.verify)
	o := r.finish(ev, err)
	if o.Code.Name == codes.ServiceNotRegistered {
		o.Action = outcome.ActionNotInstalled
	}
	return o
}

func (r *run) verify() (decide.Evidence, error) {
	if err := r.prepare(false); err != nil {
		return decide.Evidence{}, err
	}
	// An install in progress has the service half made: wait for it
	// rather than report what it is in the middle of changing.
	if err := r.waitForRun(); err != nil {
		return decide.Evidence{}, err
	}
	if err := r.checkCtrld(); err != nil {
		if !r.deps.ServiceRegistered(r.cfg.ServiceFile) {
			return decide.Evidence{Ran: decide.RanNothing, Post: decide.PostConditions{Checked: true}}, nil
		}
		return decide.Evidence{}, err
	}
	// The version picks the form of ctrld status, and --min-version
	// judges it.
	if ev, err, done := r.checkVersion(); done {
		return ev, err
	}
	// A change a run left unfinished is not a device to call healthy,
	// whatever it answers now: the next install finishes it.
	if cutShort(r.cfg.Home, previous(r.cfg.Home)) {
		return decide.Evidence{}, failBecause(codes.InstallerInterrupted, "a ctrld-install run was cut short while it changed ctrld; the next install finishes it")
	}
	post := r.postConditions()
	if r.interrupted() {
		return decide.Evidence{}, fail(codes.InstallerInterrupted)
	}
	if r.cfg.MinVersion != nil && post.Healthy() {
		def, _ := r.deps.Definition(r.cfg.ServiceFile)
		if r.deps.DaemonRunsBinary(r.budget, def.PIDFile, r.cfg.Ctrld) == parse.SameNo {
			return decide.Evidence{}, failBecause(codes.CtrldVersionUnsupported,
				"the running ctrld daemon was not started from the ctrld binary on disk (--ctrld); ctrld-install install applies it")
		}
	}
	return decide.Evidence{Ran: decide.RanNothing, Post: post}, nil
}

// waitForRun waits, within the budget, until no run holds the home's lock.
func (r *run) waitForRun() error {
	if r.deps.LockHeld == nil {
		return nil
	}
	for r.deps.LockHeld(r.cfg.Home) {
		if r.deps.Sleep(r.budget, lockPoll) != nil {
			if r.interrupted() {
				return fail(codes.InstallerInterrupted)
			}
			return failBecause(codes.InstallerBusy, "a ctrld-install run held the home directory's lock for verify's whole time limit")
		}
	}
	return nil
}

// lockPoll is how often verify looks again at a run's lock.
const lockPoll = 200 * time.Millisecond

// Uninstall removes ctrld with `ctrld uninstall` and checks that nothing
// of the service is left. Nothing installed is success with nothing run.
func Uninstall(ctx context.Context, cfg Config, deps Deps, out *report.Printer) (outcome.Outcome, *Journal) {
	r, cancel := newRun(ctx, outcome.Uninstall, cfg, deps, out)
	defer cancel()
	defer r.cleanupWorkDir()
	ev, err := r.guard(r.uninstall)
	o := r.finish(ev, err)
	r.conclude(o)
	return o, r.journal
}

func (r *run) uninstall() (decide.Evidence, error) {
	if err := r.prepare(true); err != nil {
		return decide.Evidence{}, err
	}
	pin, err := r.cfg.Secret(r.budget)
	if err != nil {
		return decide.Evidence{}, r.secretFailure(err)
	}
	if !r.deps.ServiceRegistered(r.cfg.ServiceFile) && !r.deps.Executable(r.cfg.Ctrld) {
		r.action = outcome.ActionUninstalled
		return decide.Evidence{Ran: decide.RanUninstall, Post: decide.PostConditions{Checked: true}}, nil
	}
	if err := r.checkCtrld(); err != nil {
		return decide.Evidence{}, err
	}
	// The version picks the form of ctrld uninstall and status.
	if ev, err, done := r.checkVersion(); done {
		return ev, err
	}
	if post := r.postConditions(); post.Gone() {
		r.action = outcome.ActionUninstalled
		return decide.Evidence{Ran: decide.RanUninstall, Post: post}, nil
	}
	args := r.form(parse.FeatureUninstall)
	// ctrld 1.2 has no --pin and no --cleanup: its service uninstall takes
	// neither.
	if pin.value != "" && parse.FlagSupported(r.version, parse.FeatureUninstallPin) {
		args = append(args, pin.flag, pin.value)
	}
	if r.cfg.Cleanup && parse.FlagSupported(r.version, parse.FeatureUninstallCleanup) {
		args = append(args, "--cleanup")
	}
	r.journal.phase(record.PhaseCtrldRunning)
	r.out.Infof("running ctrld uninstall (%s, time left %s)", r.versionWords(), r.timeLeft().Round(time.Second))
	c := r.command(args...)
	// ctrld's words matter only for an exit 126: uninstall asks the
	// running daemon about a PIN as start does, and a check that got no
	// answer is not a PIN.
	classifier := parse.NewClassifier()
	c.Line, c.LongLine = classifier.Line, classifier.Line
	res, err := r.change(c, "uninstall")
	if err != nil {
		return decide.Evidence{}, startFailure(err)
	}
	if res.Canceled && r.interrupted() {
		return decide.Evidence{}, fail(codes.InstallerInterrupted)
	}
	ev := decide.Evidence{Ran: decide.RanUninstall, ExitCode: res.ExitCode, TimedOut: res.TimedOut}
	if l, ok := classifier.Result(); ok {
		ev.Legacy = &l
	}
	// What is left is the evidence, whatever ctrld said (1.5.0 exits 0
	// when it could not reach its service), unless the PIN or the time
	// limit stopped it.
	if ev.ExitCode != codes.Must(codes.DeactivationPinRequired).Exit && !ev.TimedOut {
		r.journal.phase(record.PhaseChecking)
		ev.Post = r.postConditions()
	}
	// What is installed now is nothing; the version ctrld had is kept in
	// the outcome only while something is left.
	if c, _ := decide.Decide(ev); c.IsOK() {
		r.version = nil
		r.action = outcome.ActionUninstalled
	}
	return ev, nil
}

// PIN returns the deactivation-PIN secret; an empty PIN passes no flag.
func PIN(v string) Secret { return Secret{flag: "--pin", value: v} }
