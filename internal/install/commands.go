package install

import (
	"context"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/decide"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/runner"
)

// Verify checks now what success requires, starting and changing nothing.
// It needs the same privileges as install, because ctrld status does. A
// device with no service definition is "not installed": a state for the
// detection scripts, not a provisioning failure.
func Verify(ctx context.Context, cfg Config, deps Deps, out *report.Printer) outcome.Outcome {
	r, cancel := newRun(ctx, outcome.Verify, cfg, deps, out)
	defer cancel()
	defer r.cleanupWorkDir()
	ev, err := r.verify()
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
	if err := r.checkCtrld(); err != nil {
		if !r.deps.ServiceRegistered(r.cfg.ServiceFile) {
			return decide.Evidence{Ran: decide.RanNothing, Post: decide.PostConditions{Checked: true}}, nil
		}
		return decide.Evidence{}, err
	}
	if r.cfg.MinVersion != nil {
		if ev, err, done := r.checkVersion(); done {
			return ev, err
		}
	}
	post := r.postConditions()
	if r.interrupted() {
		return decide.Evidence{}, fail(codes.InstallerInterrupted)
	}
	return decide.Evidence{Ran: decide.RanNothing, Post: post}, nil
}

// Uninstall removes ctrld with `ctrld uninstall` and checks that nothing
// of the service is left. Nothing installed is success with nothing run.
func Uninstall(ctx context.Context, cfg Config, deps Deps, out *report.Printer) (outcome.Outcome, *Journal) {
	r, cancel := newRun(ctx, outcome.Uninstall, cfg, deps, out)
	defer cancel()
	defer r.cleanupWorkDir()
	r.action = outcome.ActionUninstalled
	ev, err := r.uninstall()
	return r.finish(ev, err), r.journal
}

func (r *run) uninstall() (decide.Evidence, error) {
	if err := r.prepare(true); err != nil {
		return decide.Evidence{}, err
	}
	pin, err := r.cfg.Secret(r.budget)
	if err != nil {
		return decide.Evidence{}, r.secretFailure(err)
	}
	post := r.postConditions()
	if post.Gone() {
		return decide.Evidence{Ran: decide.RanUninstall, Post: post}, nil
	}
	if err := r.checkCtrld(); err != nil {
		return decide.Evidence{}, err
	}
	// The watcher that ctrld uninstall will need starts while ctrld --version runs.
	runner.Prestart()
	if ev, err, done := r.checkVersion(); done {
		return ev, err
	}
	args := []string{"uninstall"}
	if pin.value != "" {
		args = append(args, pin.flag, pin.value)
	}
	if r.cfg.Cleanup {
		args = append(args, "--cleanup")
	}
	r.attempts++
	r.journal.phase(record.PhaseCtrldRunning)
	r.out.Infof("running ctrld uninstall (%s, time left %s)", r.versionWords(), r.timeLeft().Round(time.Second))
	c := r.command(args...)
	r.waiting(&c, "uninstall")
	res, err := r.deps.Run(r.budget, c)
	if err != nil {
		return decide.Evidence{}, startFailure(err)
	}
	if res.Canceled && r.interrupted() {
		return decide.Evidence{}, fail(codes.InstallerInterrupted)
	}
	ev := decide.Evidence{Ran: decide.RanUninstall, ExitCode: res.ExitCode, TimedOut: res.TimedOut}
	if decide.NeedsPostConditions(ev) {
		r.journal.phase(record.PhaseChecking)
		ev.Post = r.postConditions()
	}
	// What is installed now is nothing; the version ctrld had is kept in
	// the outcome only while something is left.
	if c, _ := decide.Decide(ev); c.IsOK() {
		r.version = nil
	}
	return ev, nil
}

// PIN returns the deactivation-PIN secret; an empty PIN passes no flag.
func PIN(v string) Secret { return Secret{flag: "--pin", value: v} }
