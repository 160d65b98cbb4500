// Package install is the provisioning pipeline: checks before ctrld runs,
// `ctrld --version`, an observation of the device as it is, one plan, and
// then what the plan says (nothing, `ctrld restart`, or `ctrld start` under
// the budget, with the evidence it leaves and the post-conditions after
// exit 0); and the same for verify and uninstall. Every way a run ends
// becomes evidence that goes through decide: installer failures are a typed
// error, not an outcome built on the spot. The pipeline returns the
// outcome; report.Emit puts it on every surface.
package install

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/decide"
	"github.com/Control-D-Inc/ctrld-install/internal/home"
	"github.com/Control-D-Inc/ctrld-install/internal/lock"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/plan"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/resultfile"
	"github.com/Control-D-Inc/ctrld-install/internal/runner"
	"github.com/Control-D-Inc/ctrld-install/internal/store"
)

// Failure is an installer failure: ctrld-install's own reason to stop,
// carried as an error to the one place that decides. Reason is fixed text,
// printed as the error line before the code; "" when the sentence was
// printed where the failure was met.
type Failure struct {
	Code   codes.Code
	Reason string
}

func (f *Failure) Error() string { return "ctrld-install stopped: " + f.Code.Name }

func fail(name string) error { return &Failure{Code: codes.Must(name)} }

func failBecause(name, reason string) error { return &Failure{Code: codes.Must(name), Reason: reason} }

// Budgets of the short ctrld commands inside the run's budget.
const (
	versionBudget = 15 * time.Second // ctrld --version prints one line
	statusBudget  = 30 * time.Second // ctrld status asks the service manager
)

// Retry waits grow from firstRetryWait, doubling up to maxRetryWait. A
// retry starts only with minAttemptTime of the budget left (half the budget
// when that is shorter): ctrld stopped seconds into an install leaves less
// than it found. The first attempt gets whatever is left.
const (
	firstRetryWait = 10 * time.Second
	maxRetryWait   = 60 * time.Second
	minAttemptTime = 15 * time.Second
)

// MinTimeout is the shortest --timeout: less cannot run even ctrld
// --version.
const MinTimeout = time.Second

type run struct {
	cfg     Config
	deps    Deps
	out     *report.Printer
	cmd     outcome.Command
	start   time.Time
	sig     context.Context // done on SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT
	budget  context.Context // sig plus --timeout
	workDir string
	journal *Journal
	prev    *record.Record // the outcome the last run left

	attempts   int // ctrld commands that change something: start, restart, uninstall
	starts     int // of which ctrld start, numbered for the retries
	version    *parse.Version
	action     outcome.Action
	dryRun     bool
	resultFile outcome.FileState
	serviceLog outcome.FileState
	// provisioned is the secret of a provisioning that succeeded, whose
	// fingerprint the run keeps; tokenPrint the token against the kept one.
	provisioned *Secret
	tokenPrint  *tokenPrint

	// How a rollback came out (outcome.RollbackOK or RollbackFailed, ""
	// when none was made); noRollback: the transaction could keep nothing
	// to roll back to; replaced: the hash of the build a restore replaced
	// on disk. refusedCode is the code of what was rolled back here before.
	rolledBack string
	noRollback bool
	// runsOnDisk: the device showed the daemon runs the binary at --ctrld.
	runsOnDisk  bool
	replaced    string
	refusedCode string
	// secret is what the run was given; nextTry, when the request it
	// would have sent is inside its pause, is when it may be sent again.
	secret  Secret
	nextTry time.Time
}

func newRun(ctx context.Context, cmd outcome.Command, cfg Config, deps Deps, out *report.Printer) (*run, context.CancelFunc) {
	r := &run{cfg: cfg, deps: deps, out: out, cmd: cmd, start: deps.Now(), sig: ctx}
	var cancel context.CancelFunc
	r.budget, cancel = context.WithTimeout(ctx, cfg.Timeout)
	return r, cancel
}

// Run provisions ctrld. The returned journal, non-nil only when the run
// held the home's lock, keeps the final record; the caller passes it to
// report.Emit and then closes it.
func Run(ctx context.Context, cfg Config, deps Deps, out *report.Printer) (outcome.Outcome, *Journal) {
	r, cancel := newRun(ctx, outcome.Install, cfg, deps, out)
	defer cancel()
	defer r.cleanupWorkDir()
	ev, err := r.guard(r.install)
	o := r.finish(ev, err)
	o.NextTry = r.notePause(o, r.secret)
	r.conclude(o)
	return o, r.journal
}

// errPanic is a panic in the pipeline, ended as an installer failure.
var errPanic = errors.New("panic")

// guard runs a pipeline and turns a panic into an error, so that the run
// still ends through finish: INSTALLER_FAILED with a fixed sentence, the
// record and the final line, and the lock released. ctrld's group is
// settled by the runner's own deferred calls as the panic unwinds. Nothing
// of the panic's value is kept: it may hold what ctrld printed.
func (r *run) guard(pipeline func() (decide.Evidence, error)) (ev decide.Evidence, err error) {
	defer func() {
		if recover() != nil {
			ev, err = decide.Evidence{}, errPanic
		}
	}()
	return pipeline()
}

// finish turns the evidence, or the installer failure that ended the run,
// into the outcome.
func (r *run) finish(ev decide.Evidence, err error) outcome.Outcome {
	var f *Failure
	switch {
	case errors.As(err, &f):
		if f.Reason != "" {
			r.out.Errorf("%s", f.Reason)
		}
		ev.Installer = &f.Code
	case err != nil:
		r.out.Errorf("an unexpected error stopped the run")
		c := codes.Must(codes.InstallerFailed)
		ev.Installer = &c
	}
	if ev.Installer == nil && r.interrupted() {
		r.out.Errorf("a signal stopped the run")
		c := codes.Must(codes.InstallerInterrupted)
		ev.Installer = &c
	}
	c, src := decide.Decide(ev)
	o := outcome.Outcome{
		Command:      r.cmd,
		Code:         c,
		Source:       src,
		Action:       r.action,
		ResultFile:   r.resultFile,
		ServiceLog:   r.serviceLog,
		Attempts:     r.attempts,
		Elapsed:      r.deps.Now().Sub(r.start),
		CtrldVersion: r.version,
		DryRun:       r.dryRun,
		Rollback:     r.rolledBack,
	}
	if r.noRollback && o.Rollback == "" && o.Action != outcome.ActionNone {
		o.Rollback = outcome.RollbackNone
	}
	if r.cmd == outcome.Install && o.ResultFile == outcome.FileNone && !r.dryRun {
		o.ResultFile = outcome.FileAbsent
	}
	if r.cmd == outcome.Uninstall && !c.IsOK() {
		// uninstalled is what a device is after a removal that held.
		o.Action = outcome.ActionNone
	}
	if r.cmd != outcome.Verify && !c.IsOK() && r.version == nil && r.prev != nil {
		// ctrld never answered this time; what the last run saw is
		// still what is installed as far as ctrld-install knows.
		o.CtrldVersion = recordedVersion(r.prev)
	}
	return o
}

// conclude records what the outcome means for the next run: whether the
// last provisioning succeeded, the fingerprint of the token it used, and
// the build worth keeping.
func (r *run) conclude(o outcome.Outcome) {
	if r.journal == nil {
		return
	}
	// What the journal carried over: the record's own word, or what an
	// older record or a killed run implies.
	last := r.journal.provisioning
	switch {
	case r.cmd == outcome.Uninstall && o.Code.IsOK():
		last = ""
		store.RemoveAll(r.cfg.Home)
	case o.Action == outcome.ActionProvisioned && o.Code.IsOK():
		last = record.ProvisioningOK
		if p := r.provisioned; p != nil {
			r.keepFingerprint(*p)
		}
	case o.Action == outcome.ActionProvisioned:
		last = record.ProvisioningFailed
	case o.Action == outcome.ActionSkipped && last == "":
		last = record.ProvisioningOK
	}
	r.journal.SetProvisioning(last)
	// A device that verified is no longer refusing what it now runs. Its
	// build is worth keeping unless a change brought it in this run: that
	// is on probation until a later run finds it healthy (confirm).
	if r.cmd == outcome.Install && o.Code.IsOK() && !o.DryRun && o.Action != outcome.ActionNone {
		r.forgetRefused(r.provisioned)
		if _, probation := r.onProbation(); !probation && r.runsOnDisk {
			_, _ = r.keepBuild()
		}
	}
}

// keepFingerprint keeps what the provisioning succeeded with. The same
// token again needs no new fingerprint. When the new one cannot be kept (a
// full disk), the old one goes: the next run then cannot tell the token,
// which is no change, rather than a change on every run from now on.
func (r *run) keepFingerprint(s Secret) {
	if s.IsToken() && r.tokenPrint.result() == parse.SameYes {
		return
	}
	remember := func() error { return rememberResolver(r.cfg.Home) }
	if s.IsToken() {
		remember = func() error { return rememberToken(r.cfg.Home, s.value) }
	}
	if remember() != nil {
		_ = store.ForgetToken(r.cfg.Home)
	}
}

// rememberToken and rememberResolver are the store's; a test makes them
// fail as a full disk would.
var (
	rememberToken    = store.RememberToken
	rememberResolver = store.RememberResolver
)

func (r *run) interrupted() bool { return r.sig.Err() != nil }

// afterGrace is how long the evidence ctrld left may still be read once
// the budget is spent: the daemon's log may name why the time ran out.
const afterGrace = time.Second

// afterCtx bounds reading the evidence after ctrld ended: the budget, or
// afterGrace past it when the time limit stopped ctrld; a signal ends it
// at once.
func (r *run) afterCtx() (context.Context, context.CancelFunc) {
	if r.budget.Err() == nil {
		return context.WithCancel(r.budget)
	}
	return context.WithTimeout(r.sig, afterGrace)
}

// stopped maps the end of the budget while waiting: a signal is an
// interruption, the time limit is ctrld's timeout.
func (r *run) stopped() (decide.Evidence, error) {
	if r.interrupted() {
		return decide.Evidence{}, fail(codes.InstallerInterrupted)
	}
	return decide.Evidence{Ran: decide.RanStart, TimedOut: true, ExitCode: -1}, nil
}

func (r *run) install() (decide.Evidence, error) {
	if err := r.prepare(!r.cfg.DryRun); err != nil {
		return decide.Evidence{}, err
	}
	if r.cfg.DryRun {
		r.prev = previous(r.cfg.Home)
	}
	secret, err := r.cfg.Secret(r.budget)
	if err != nil {
		return decide.Evidence{}, r.secretFailure(err)
	}
	r.secret = secret
	if secret.Given() && secret.IsToken() {
		r.tokenPrint = startTokenPrint(r.cfg.Home, secret.value)
	}
	// A change a run left unfinished is finished before anything else,
	// with or without a token: it may have left nothing registered.
	_, unfinished := r.readTx()
	if !secret.Given() && !unfinished && !r.deps.ServiceRegistered(r.cfg.ServiceFile) {
		// Nothing to repair: without a token there is nothing to do.
		r.out.Errorf("%s", errNoSecret.Error())
		return decide.Evidence{}, fail(codes.InstallerUsage)
	}
	if err := r.checkCtrld(); err != nil {
		return decide.Evidence{}, err
	}
	if ev, err, done := r.checkVersion(); done {
		return ev, err
	}
	if unfinished && !r.cfg.DryRun {
		if ev, done := r.finishCutShort(); done {
			return ev, nil
		}
	}
	if !secret.Given() && !r.deps.ServiceRegistered(r.cfg.ServiceFile) {
		r.out.Errorf("%s", errNoSecret.Error())
		return decide.Evidence{}, fail(codes.InstallerUsage)
	}
	obs, post := r.observe(secret)
	if r.interrupted() {
		return decide.Evidence{}, fail(codes.InstallerInterrupted)
	}
	r.observeRefused(&obs, secret)
	p := plan.Decide(obs, plan.Request{Secret: secret.Given(), Force: r.cfg.Force})
	// A skip says so in its last line; every other plan says why.
	if p.Action != plan.Nothing || r.cfg.DryRun || p.Refused {
		r.out.Infof("plan: %s", p.Reason)
	}
	if p.NeedsSecret && !secret.Given() {
		r.out.Errorf("%s", errNoSecret.Error())
		return decide.Evidence{}, fail(codes.InstallerUsage)
	}
	if p.Action == plan.Provision {
		if err := r.gate(secret); err != nil {
			return decide.Evidence{}, err
		}
		if c, next, ok := r.paused(secret); ok {
			r.out.Infof("plan: %s (%s); it is sent again from %s, or now with --force, another request or another ctrld build", plan.ReasonPaused, c.Name, next.UTC().Format(time.RFC3339))
			r.nextTry = next
			return decide.Evidence{Ran: decide.RanNothing, Refused: &c}, nil
		}
	}
	if r.cfg.DryRun {
		r.dryRun = true
		r.action = plannedAction(p.Action)
		return decide.Evidence{Ran: decide.RanPlanOnly}, nil
	}
	switch {
	case p.Refused:
		return r.refusedEvidence(p), nil
	case p.Transaction:
		if p.RestoreBinary {
			r.restoreKeptOnDisk()
			obs.Binary = parse.SameYes
		}
		if p.BuildFirst {
			r.out.Infof("plan: %s", plan.ReasonBuildFirst)
			ev := r.transact(plan.Plan{Action: plan.Upgrade, Transaction: true}, obs, secret)
			if c, _ := decide.Decide(ev); !c.IsOK() {
				return ev, nil
			}
			obs.Binary = parse.SameYes
		}
		return r.transact(p, obs, secret), nil
	case p.Action == plan.Nothing:
		r.action = outcome.ActionSkipped
		r.runsOnDisk = obs.Binary == parse.SameYes
		r.confirm(post, obs)
		return decide.Evidence{Ran: decide.RanNothing, Post: post}, nil
	case p.Action == plan.Repair:
		return r.repair(p, secret)
	}
	return r.provision(secret, plainPhases)
}

// repair restarts a registered service that does not run or answer. One
// that does not hold falls back to provisioning, when the plan allows it
// and the time an attempt needs is left: a start cut short would leave
// less than the repair found. A change still on probation that cannot be
// repaired is rolled back to what ran before it.
func (r *run) repair(p plan.Plan, secret Secret) (decide.Evidence, error) {
	ev := r.restart(outcome.ActionRepaired, plainPhases)
	c, _ := decide.Decide(ev)
	if c.IsOK() || r.interrupted() {
		return ev, nil
	}
	if t, ok := r.onProbation(); ok {
		r.out.Infof("the repair did not hold (%s); bringing back what ran before the last change", codes.Identifier(c))
		t.State = txOpen
		if r.writeTx(t) == nil && r.rollBack(t) {
			return ev, nil
		}
	}
	// A package that put a new build down and restarted the service (the
	// MSI and the pkg do) took down a device that ran the kept build: the
	// repair onto that new build is undone like a change.
	if info, ok := r.keptInfo(); ok && !r.onDiskIs(info) {
		r.out.Infof("the repair did not hold (%s); bringing back the ctrld build that verified here before", codes.Identifier(c))
		t := txFile{State: txOpen, Action: plan.Repair.String(), Build: info.SHA256, Ctrld: info.Ctrld}
		if r.writeTx(t) == nil && r.rollBack(t) {
			r.refuse(plan.Plan{Action: plan.Repair}, c, secret, plan.Observation{Binary: parse.SameNo})
			return ev, nil
		}
	}
	if !p.Fallback || !secret.Given() || r.timeLeft() < r.minAttempt() {
		return ev, nil
	}
	r.out.Infof("the repair did not hold (%s); provisioning again", codes.Identifier(c))
	return r.provision(secret, plainPhases)
}

func plannedAction(a plan.Action) outcome.Action {
	switch a {
	case plan.Repair:
		return outcome.ActionRepaired
	case plan.Upgrade:
		return outcome.ActionUpgraded
	case plan.Provision:
		return outcome.ActionProvisioned
	}
	return outcome.ActionSkipped
}

// provision runs ctrld start, retrying retryable failures within the
// budget.
func (r *run) provision(secret Secret, ph phases) (decide.Evidence, error) {
	r.action = outcome.ActionProvisioned
	for {
		if r.starts > 0 && r.timeLeft() < r.minAttempt() || r.timeLeft() == 0 {
			return r.stopped()
		}
		ev := r.attempt(secret, ph)
		c, src := decide.Decide(ev)
		if c.Name == codes.InstallerUsage && src == outcome.SourceLegacyOutput {
			// ctrld's own words may hold the token: say it in fixed words.
			r.out.Errorf("ctrld refused a flag or a value given after -- (the extra flags for ctrld start)")
		}
		if c.IsOK() {
			r.provisioned = &secret
			r.runsOnDisk = true
		}
		wait, again := r.retryWait(c)
		if !again {
			return ev, nil
		}
		r.out.Infof("attempt %d failed: %s; retrying in %s", r.starts, codes.Identifier(c), wait)
		if r.deps.Sleep(r.budget, wait) != nil {
			if r.interrupted() {
				return decide.Evidence{}, fail(codes.InstallerInterrupted)
			}
			return ev, nil
		}
		// A failed attempt may still have left a healthy service (ctrld
		// warned, then recovered): a retry must never re-provision it.
		if post := r.postConditions(); post.Healthy() {
			r.provisioned = &secret
			r.runsOnDisk = true
			return decide.Evidence{Ran: decide.RanNothing, Post: post}, nil
		}
	}
}

// minAttempt is how much budget a retry needs to be worth starting.
func (r *run) minAttempt() time.Duration {
	return min(minAttemptTime, r.cfg.Timeout/2)
}

// prepare runs the checks every command shares: privileges, the home
// directory and its lock, the journal. withHome is false for verify and a
// dry run, which write nothing.
func (r *run) prepare(withHome bool) error {
	priv, err := r.deps.Privileged()
	if err != nil || !priv {
		return failBecause(codes.InstallerNotRoot, "ctrld-install must run as root (on Windows, as an elevated administrator or SYSTEM)")
	}
	if withHome {
		if err := r.prepareHome(); err != nil {
			return err
		}
	}
	if r.workDir == "" {
		// Never ctrld-install's own working directory: ctrld reads config
		// files from its working directory.
		d, err := os.MkdirTemp("", "ctrld-install-*")
		if err != nil {
			return failBecause(codes.InstallerFailed, "a private working directory for ctrld cannot be made in the temporary directory")
		}
		r.workDir = d
	}
	return nil
}

// prepareHome refuses a home someone else controls, takes the run lock
// there and starts the journal. A home that cannot be created does not stop
// the run: ctrld may still succeed, and the outcome is printed and exited
// with even when it cannot be recorded.
func (r *run) prepareHome() error {
	if err := r.deps.CheckHome(r.cfg.Home); err != nil {
		if unsafeHome(err) {
			return failBecause(codes.InstallerHomeUnsafe, err.Error()+"; refusing to use it")
		}
		r.out.Errorf("the home directory (--home) cannot hold the run lock and the outcome record; continuing without them")
		return nil
	}
	l, err := r.deps.Lock(r.budget, r.cfg.Home)
	switch {
	case errors.Is(err, lock.ErrBusy):
		if r.interrupted() {
			return fail(codes.InstallerInterrupted)
		}
		return failBecause(codes.InstallerBusy, "another ctrld-install run held the home directory's lock for the whole time limit")
	case err != nil:
		r.out.Errorf("the home directory (--home) cannot hold the run lock and the outcome record; continuing without them")
		return nil
	}
	r.workDir = r.cfg.Home
	r.prev = previous(r.cfg.Home)
	// What a run killed while it copied left half written.
	store.RemoveTemporaries(r.cfg.Home)
	store.RemoveTemporaries(filepath.Dir(r.cfg.Ctrld))
	if target, err := filepath.EvalSymlinks(r.cfg.Ctrld); err == nil {
		store.RemoveTemporaries(filepath.Dir(target))
	}
	command := record.CommandInstall
	if r.cmd == outcome.Uninstall {
		command = record.CommandUninstall
	}
	r.journal = &Journal{
		path:             record.Path(r.cfg.Home),
		command:          command,
		lock:             l,
		out:              r.out,
		installerVersion: r.cfg.InstallerVersion,
		now:              r.deps.Now,
	}
	if r.prev != nil {
		r.journal.ctrldVersion = r.prev.CtrldVersion
		r.journal.provisioning = lastProvisioningWord(r.prev)
	}
	r.journal.phase(record.PhaseStarted)
	return nil
}

func (r *run) cleanupWorkDir() {
	if r.workDir != "" && r.workDir != r.cfg.Home {
		os.RemoveAll(r.workDir)
	}
}

func (r *run) checkCtrld() error {
	if !r.deps.Executable(r.cfg.Ctrld) {
		return failBecause(codes.CtrldNotFound, "the ctrld binary (--ctrld) does not exist or cannot be executed")
	}
	return nil
}

func (r *run) command(args ...string) runner.Command {
	return runner.Command{Path: r.cfg.Ctrld, Argv0: r.cfg.CtrldArgv0, Args: args, Dir: r.workDir, Env: r.cfg.Env}
}

// change runs a command that changes the device (ctrld start, restart or
// uninstall, systemctl restart) within the budget, counted as an attempt,
// with a progress line while it runs, against the time left when it
// starts: an admin watching a run that takes minutes sees it is alive.
func (r *run) change(c runner.Command, name string) (runner.Result, error) {
	r.attempts++
	limit := r.timeLeft()
	c.Progress = func(elapsed time.Duration) { r.out.Waiting(name, elapsed, limit) }
	return r.deps.Run(r.budget, c)
}

// checkVersion runs `ctrld --version`. Its output is parsed for a semver
// version only; an unknown version (a dev build) is allowed. done says the
// run ends here.
func (r *run) checkVersion() (ev decide.Evidence, err error, done bool) {
	ctx, cancel := context.WithTimeout(r.budget, versionBudget)
	defer cancel()
	var buf bytes.Buffer
	c := r.command("--version")
	c.Brief = true
	c.Line = func(b []byte) {
		if buf.Len() < 4<<10 {
			buf.Write(b)
			buf.WriteByte('\n')
		}
	}
	res, err := r.deps.Run(ctx, c)
	if err != nil {
		return decide.Evidence{}, startFailure(err), true
	}
	if res.Canceled || (res.TimedOut && r.budget.Err() != nil) {
		ev, err := r.stopped()
		return ev, err, true
	}
	if res.ExitCode == 0 {
		if v, err := parse.CtrldVersion(&buf); err == nil {
			r.version = v
		}
	}
	if r.cfg.MinVersion != nil && r.version != nil && r.version.LessThan(r.cfg.MinVersion) {
		// The value given is not echoed: a PIN pasted into --min-version
		// parses as a version.
		r.out.Errorf("ctrld %s is older than the --min-version given", parse.DisplayVersion(r.version))
		return decide.Evidence{}, fail(codes.CtrldVersionUnsupported), true
	}
	return decide.Evidence{}, nil, false
}

// gate refuses, before ctrld starts, a secret this ctrld has no flag for.
// An unknown version (a dev build) proceeds.
func (r *run) gate(s Secret) error {
	since := parse.MinVersionFor(s.Flag())
	if r.version == nil || since == nil || !r.version.LessThan(since) {
		return nil
	}
	r.out.Errorf("ctrld %s has no %s flag (it appeared in ctrld %s)", parse.DisplayVersion(r.version), s.Flag(), parse.DisplayVersion(since))
	return fail(codes.CtrldVersionUnsupported)
}

// startFailure maps a failure to start ctrld: a missing or non-executable
// file is CTRLD_NOT_FOUND; a file that is not a program for this system
// (another architecture) and anything else (no resources) is
// ctrld-install's own failure. Each says why in fixed words.
func startFailure(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return failBecause(codes.CtrldNotFound, "the ctrld binary (--ctrld) does not exist")
	case errors.Is(err, fs.ErrPermission):
		return failBecause(codes.CtrldNotFound, "the ctrld binary (--ctrld) cannot be executed: permission denied")
	case errors.Is(err, syscall.ENOEXEC):
		return failBecause(codes.InstallerFailed, "the ctrld binary (--ctrld) is not a program for this system: built for another architecture or operating system, or damaged")
	}
	return failBecause(codes.InstallerFailed, "ctrld could not be started")
}

// restart runs ctrld restart on the registered service: an upgrade (a new
// binary under a running daemon) or a repair (a registered service whose
// daemon does not run). Nothing is provisioned again: no token reaches
// ctrld.
func (r *run) restart(action outcome.Action, ph phases) decide.Evidence {
	r.action = action
	r.journal.phase(ph.running)
	args := r.form(parse.FeatureRestart)
	words := r.versionWords()
	if was := recordedVersion(r.prev); action == outcome.ActionUpgraded && was != nil && r.version != nil && !was.Equal(r.version) {
		words += " replaces " + parse.DisplayVersion(was)
	}
	c := r.command(args...)
	if sd, ok := r.systemd(); ok && action == outcome.ActionRepaired {
		// A unit waiting out its RestartSec makes ctrld restart wait too
		// (113 s); systemd's own restart does not.
		c = r.systemctl(sd, "restart", sd.Unit)
		// The unit's name comes from --service-file: fixed words only.
		r.out.Infof("running systemctl restart of ctrld's unit (%s, time left %s)", words, r.timeLeft().Round(time.Second))
	} else {
		r.out.Infof("running ctrld %s (%s, time left %s)", args[len(args)-1], words, r.timeLeft().Round(time.Second))
	}
	failed := false
	c.Line = func(b []byte) { failed = failed || parse.RestartFailed(b) }
	res, err := r.change(c, "restart")
	if err != nil {
		f := startFailure(err).(*Failure)
		r.out.Errorf("%s", f.Reason)
		return decide.Evidence{Ran: decide.RanRestart, Installer: &f.Code}
	}
	ev := decide.Evidence{Ran: decide.RanRestart, ExitCode: res.ExitCode, TimedOut: res.TimedOut}
	if failed {
		// ctrld 1.5.0 exits 0 after it: its words are the evidence.
		c := codes.Must(codes.ServiceStartFailed)
		ev.Legacy = &c
	}
	if res.Canceled && r.interrupted() {
		c := codes.Must(codes.InstallerInterrupted)
		ev.Installer = &c
		return ev
	}
	// Success needs the device's proof; a restart that failed in its
	// exit status or its own words needs none.
	if ev.ExitCode == 0 && !ev.TimedOut && ev.Legacy == nil {
		r.journal.phase(ph.checking)
		ev.Post = r.settled()
	}
	if c, _ := decide.Decide(ev); c.IsOK() {
		r.runsOnDisk = true
	}
	return ev
}

// form is the command line of a service command for the installed ctrld:
// `ctrld status`, `restart`, `uninstall` from 1.3.0, `ctrld service
// status` and so on before (1.2 has them under service only). An unknown
// version gets the current form.
func (r *run) form(feature string) []string {
	if parse.FlagSupported(r.version, feature) {
		return []string{feature}
	}
	return []string{"service", feature}
}

func recordedVersion(rec *record.Record) *parse.Version {
	if rec == nil || rec.CtrldVersion == nil {
		return nil
	}
	v, err := parse.ParseVersion(*rec.CtrldVersion)
	if err != nil {
		return nil
	}
	return v
}

// retryWait says whether an attempt that ended with c is tried again, and
// after how long.
func (r *run) retryWait(c codes.Code) (time.Duration, bool) {
	if c.Class != codes.ClassRetryable || r.starts > r.cfg.Retries || r.interrupted() {
		return 0, false
	}
	wait := firstRetryWait << (r.starts - 1)
	if wait > maxRetryWait || wait <= 0 {
		wait = maxRetryWait
	}
	if r.timeLeft() < wait+r.minAttempt() {
		return 0, false
	}
	return wait, true
}

// attempt runs ctrld start once and gathers its evidence.
func (r *run) attempt(secret Secret, ph phases) decide.Evidence {
	r.starts++
	r.journal.phase(ph.running)
	r.out.Infof("running ctrld start (%s, attempt %d of %d, time left %s)",
		r.versionWords(), r.starts, 1+r.cfg.Retries, r.timeLeft().Round(time.Second))

	// What is there before ctrld starts is never this attempt's evidence,
	// whatever its time says.
	resultBefore := resultfile.Snapshot(r.cfg.ResultFile)
	before := snapshotLogs(r.budget, r.cfg.ServiceLogs)
	ev := decide.Evidence{Ran: decide.RanStart}
	classifier := parse.NewClassifier()
	classifier.SetOwnFlags(FlagToken, FlagResolver)
	c := r.command(append([]string{"start", secret.flag, secret.value}, r.cfg.Extra...)...)
	c.Line = func(b []byte) {
		if ev.Identifier == nil {
			if c, ok := parse.IdentifierLine(b); ok {
				found := c // only a found line costs an allocation
				ev.Identifier = &found
			}
		}
		classifier.Line(b)
	}
	// A cut line is never an identifier line, but its start may still be
	// a message the classifier knows.
	c.LongLine = classifier.Line
	res, err := r.change(c, "start")
	if err != nil {
		f := startFailure(err).(*Failure)
		r.out.Errorf("%s", f.Reason)
		ev.Installer = &f.Code
		return ev
	}
	ev.ExitCode = res.ExitCode
	ev.TimedOut = res.TimedOut
	if res.Canceled && r.interrupted() {
		c := codes.Must(codes.InstallerInterrupted)
		ev.Installer = &c
	}
	if c, ok := classifier.Result(); ok {
		ev.Legacy = &c
	}
	ev.UnknownFlag, ev.OwnFlag = classifier.UnknownFlag()
	finding := resultBefore.Inspect()
	r.resultFile, ev.ResultFile = finding.State, finding.State
	if finding.State == outcome.FileUsed {
		ev.ResultCode = finding.Code
	}
	logs, stop := r.afterCtx()
	r.serviceLog, ev.ServiceLog = readLogs(logs, before)
	stop()

	// Exit 0 is success only with the device's proof (contract section
	// 9); a result file or an identifier line has said already.
	if ev.ExitCode == 0 && !ev.TimedOut && ev.Installer == nil && ev.ResultFile != outcome.FileUsed && ev.Identifier == nil {
		r.journal.phase(ph.checking)
		ev.Post = r.settled()
		if r.interrupted() {
			c := codes.Must(codes.InstallerInterrupted)
			ev.Installer = &c
		}
	}
	return ev
}

func (r *run) versionWords() string {
	if r.version == nil {
		return "ctrld version unknown"
	}
	return "ctrld " + parse.DisplayVersion(r.version)
}

func (r *run) timeLeft() time.Duration {
	d, ok := r.budget.Deadline()
	if !ok {
		return 0
	}
	left := time.Until(d)
	if left < 0 {
		left = 0
	}
	return left
}

// unsafeHome reports whether the home was refused because someone else
// may control it, or because it is something other than a directory
// (--home /dev/null), rather than because it cannot be created or read.
func unsafeHome(err error) bool {
	for _, e := range []error{home.ErrSymlink, home.ErrNotOwned, home.ErrWritable, home.ErrNotDir} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
