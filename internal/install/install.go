// Package install is the provisioning pipeline: checks before ctrld runs,
// `ctrld --version`, `ctrld start` under the budget, the evidence it leaves,
// and the post-conditions after exit 0; and the same for verify, upgrade
// and uninstall. Every way a run ends becomes evidence that goes through
// decide: installer failures are a typed error, not an outcome built on the
// spot. The pipeline returns the outcome; report.Emit puts it on every
// surface.
package install

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/decide"
	"github.com/Control-D-Inc/ctrld-install/internal/home"
	"github.com/Control-D-Inc/ctrld-install/internal/lock"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/resultfile"
	"github.com/Control-D-Inc/ctrld-install/internal/runner"
)

// Failure is an installer failure: ctrld-install's own reason to stop,
// carried as an error to the one place that decides.
type Failure struct{ Code codes.Code }

func (f *Failure) Error() string { return "ctrld-install stopped: " + f.Code.Name }

func fail(name string) error { return &Failure{Code: codes.Must(name)} }

// Budgets of the short ctrld commands inside the run's budget.
const (
	versionBudget = 15 * time.Second // ctrld --version prints one line
	statusBudget  = 30 * time.Second // ctrld status asks the service manager
)

// Retry waits grow from firstRetryWait, doubling up to maxRetryWait.
// An attempt starts only with minAttemptTime of the budget left: ctrld
// stopped seconds into an install leaves less than it found. A --timeout
// shorter than that gives its whole length to the first attempt.
const (
	firstRetryWait = 10 * time.Second
	maxRetryWait   = 60 * time.Second
	minAttemptTime = 15 * time.Second
)

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

	attempts   int
	version    *parse.Version
	action     outcome.Action
	resultFile outcome.FileState
	serviceLog outcome.FileState
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
	r.action = outcome.ActionProvisioned
	ev, err := r.provision()
	return r.finish(ev, err), r.journal
}

// finish turns the evidence, or the installer failure that ended the run,
// into the outcome.
func (r *run) finish(ev decide.Evidence, err error) outcome.Outcome {
	var f *Failure
	switch {
	case errors.As(err, &f):
		ev.Installer = &f.Code
	case err != nil:
		c := codes.Must(codes.InstallerFailed)
		ev.Installer = &c
	}
	if ev.Installer == nil && r.interrupted() {
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
	}
	if r.cmd == outcome.Install && o.ResultFile == outcome.FileNone {
		o.ResultFile = outcome.FileAbsent
	}
	if r.cmd == outcome.Install && !c.IsOK() && r.version == nil && r.prev != nil {
		// ctrld never answered this time; what the last run provisioned is
		// still what runs as far as ctrld-install knows.
		o.CtrldVersion = recordedVersion(r.prev)
	}
	return o
}

func (r *run) interrupted() bool { return r.sig.Err() != nil }

// stopped maps the end of the budget while waiting: a signal is an
// interruption, the time limit is ctrld's timeout.
func (r *run) stopped() (decide.Evidence, error) {
	if r.interrupted() {
		return decide.Evidence{}, fail(codes.InstallerInterrupted)
	}
	return decide.Evidence{Ran: decide.RanStart, TimedOut: true, ExitCode: -1}, nil
}

func (r *run) provision() (decide.Evidence, error) {
	if err := r.prepare(true); err != nil {
		return decide.Evidence{}, err
	}
	secret, err := r.cfg.Secret(r.budget)
	if err != nil {
		return decide.Evidence{}, r.secretFailure(err)
	}
	if err := r.checkCtrld(); err != nil {
		return decide.Evidence{}, err
	}
	// The watcher that ctrld start will need starts while ctrld --version runs.
	runner.Prestart()
	if ev, err, done := r.checkVersion(); done {
		return ev, err
	}
	if err := r.gate(secret); err != nil {
		return decide.Evidence{}, err
	}
	// ctrld start uninstalls the running service before it tries, so a
	// failed re-run would leave a protected machine unprotected. MDM tools
	// re-run install scripts on every check-in: leave a healthy ctrld
	// alone, unless a package put another version under it.
	if !r.cfg.Force {
		if ev, done := r.preCheck(); done {
			return ev, nil
		}
	}
	for {
		if r.timeLeft() < r.minAttempt() {
			if r.attempts == 0 {
				r.out.Errorf("too little of the time limit was left to start ctrld (--timeout)")
			}
			return r.stopped()
		}
		ev := r.attempt(secret)
		c, src := decide.Decide(ev)
		if c.Name == codes.InstallerUsage && src == outcome.SourceLegacyOutput {
			// ctrld's own words may hold the token: say it in fixed words.
			r.out.Errorf("ctrld refused a flag or a value given after -- (the extra flags for ctrld start)")
		}
		wait, again := r.retryWait(c)
		if !again {
			return ev, nil
		}
		r.out.Infof("attempt %d failed: %s; retrying in %s", r.attempts, codes.Identifier(c), wait)
		if r.deps.Sleep(r.budget, wait) != nil {
			if r.interrupted() {
				return decide.Evidence{}, fail(codes.InstallerInterrupted)
			}
			return ev, nil
		}
		// A failed attempt may still have left a healthy service (ctrld
		// warned, then recovered): a retry must never re-provision it.
		if post := r.postConditions(); post.Healthy() {
			return decide.Evidence{Ran: decide.RanNothing, Post: post}, nil
		}
	}
}

// minAttempt is how much budget an attempt needs to be worth starting.
func (r *run) minAttempt() time.Duration {
	if r.cfg.Timeout < minAttemptTime {
		return r.cfg.Timeout / 2
	}
	return minAttemptTime
}

// prepare runs the checks every command shares: privileges, the home
// directory and its lock, the journal. withHome is false for verify,
// which writes nothing.
func (r *run) prepare(withHome bool) error {
	priv, err := r.deps.Privileged()
	if err != nil || !priv || r.cfg.Fault.NotRoot {
		return fail(codes.InstallerNotRoot)
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
			return fail(codes.InstallerFailed)
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
			r.out.Errorf("%s; refusing to use it", err.Error())
			return fail(codes.InstallerFailed)
		}
		r.out.Errorf("the home directory (--home) cannot hold the run lock and the outcome record; continuing without them")
		return nil
	}
	if r.cfg.Fault.HoldLock {
		// Another holder, as a second run would be: the lock is per open file.
		if holder, err := lock.Acquire(r.budget, r.cfg.Home); err == nil {
			defer holder.Release()
		}
	}
	l, err := lock.Acquire(r.budget, r.cfg.Home)
	switch {
	case errors.Is(err, lock.ErrBusy):
		if r.interrupted() {
			return fail(codes.InstallerInterrupted)
		}
		return fail(codes.InstallerBusy)
	case err != nil:
		r.out.Errorf("the home directory (--home) cannot hold the run lock and the outcome record; continuing without them")
		return nil
	}
	r.workDir = r.cfg.Home
	r.prev = previous(r.cfg.Home)
	r.journal = &Journal{
		path:             recordPath(r.cfg.Home),
		lock:             l,
		out:              r.out,
		installerVersion: r.cfg.InstallerVersion,
		now:              r.deps.Now,
	}
	if r.prev != nil {
		r.journal.ctrldVersion = r.prev.CtrldVersion
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
		return fail(codes.CtrldNotFound)
	}
	return nil
}

func (r *run) command(args ...string) runner.Command {
	return runner.Command{Path: r.cfg.Ctrld, Argv0: r.cfg.CtrldArgv0, Args: args, Dir: r.workDir, Env: r.cfg.Env}
}

// waiting has c print a progress line while ctrld name (start, restart,
// uninstall) runs, against the time left when it starts: an admin watching
// a run that takes minutes sees it is alive.
func (r *run) waiting(c *runner.Command, name string) {
	limit := r.timeLeft()
	c.Progress = func(elapsed time.Duration) { r.out.Waiting(name, elapsed, limit) }
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
// file is CTRLD_NOT_FOUND; anything else (a corrupt binary, no resources) is
// ctrld-install's own failure.
func startFailure(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return fail(codes.CtrldNotFound)
	}
	return fail(codes.InstallerFailed)
}

// preCheck leaves a healthy ctrld alone, or applies an upgrade when the
// binary's version differs from the one the last run provisioned. done says
// the run ends with ev.
func (r *run) preCheck() (ev decide.Evidence, done bool) {
	post := r.postConditions()
	if r.interrupted() {
		return decide.Evidence{}, false
	}
	if !post.Healthy() {
		return decide.Evidence{}, false
	}
	was := recordedVersion(r.prev)
	if r.version == nil || was == nil || r.version.Equal(was) {
		r.action = outcome.ActionSkipped
		return decide.Evidence{Ran: decide.RanNothing, Post: post}, true
	}
	return r.restart(was), true
}

// restart applies a new ctrld binary to the running service.
func (r *run) restart(was *parse.Version) decide.Evidence {
	r.action = outcome.ActionUpgraded
	r.attempts++
	r.journal.phase(record.PhaseCtrldRunning)
	r.out.Infof("running ctrld restart (ctrld %s replaces %s, time left %s)", parse.DisplayVersion(r.version), parse.DisplayVersion(was), r.timeLeft().Round(time.Second))
	c := r.command("restart")
	r.waiting(&c, "restart")
	res, err := r.deps.Run(r.budget, c)
	if err != nil {
		return decide.Evidence{Ran: decide.RanRestart, ExitCode: -1}
	}
	ev := decide.Evidence{Ran: decide.RanRestart, ExitCode: res.ExitCode, TimedOut: res.TimedOut}
	if decide.NeedsPostConditions(ev) {
		r.journal.phase(record.PhaseChecking)
		ev.Post = r.postConditions()
	}
	return ev
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
	if c.Class != codes.ClassRetryable || r.attempts > r.cfg.Retries || r.interrupted() {
		return 0, false
	}
	wait := firstRetryWait << (r.attempts - 1)
	if wait > maxRetryWait || wait <= 0 {
		wait = maxRetryWait
	}
	if r.timeLeft() < wait+r.minAttempt() {
		return 0, false
	}
	return wait, true
}

// attempt runs ctrld start once and gathers its evidence.
func (r *run) attempt(secret Secret) decide.Evidence {
	r.attempts++
	r.journal.phase(record.PhaseCtrldRunning)
	r.out.Infof("running ctrld start (%s, attempt %d of %d, time left %s)",
		r.versionWords(), r.attempts, 1+r.cfg.Retries, r.timeLeft().Round(time.Second))

	// What is there before ctrld starts is never this attempt's evidence,
	// whatever its time says.
	resultBefore := resultfile.Snapshot(r.cfg.ResultFile)
	before := snapshotLogs(r.cfg.ServiceLogs)
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
	r.waiting(&c, "start")
	res, err := r.deps.Run(r.budget, c)
	if err != nil {
		f := startFailure(err).(*Failure)
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
	finding := inspectResultFile(resultBefore)
	r.resultFile = finding.state
	if finding.state == outcome.FileUsed {
		ev.ResultFile, ev.ResultCode = outcome.FileUsed, finding.code
	} else {
		ev.ResultFile = finding.state
	}
	r.serviceLog, ev.ServiceLog = readLogs(before)

	if decide.NeedsPostConditions(ev) {
		r.journal.phase(record.PhaseChecking)
		ev.Post = r.postConditions()
		if r.interrupted() {
			c := codes.Must(codes.InstallerInterrupted)
			ev.Installer = &c
		}
	}
	return ev
}

// postConditions checks what success needs: the service definition exists
// and ctrld status says the service runs.
func (r *run) postConditions() decide.PostConditions {
	p := decide.PostConditions{Checked: true}
	p.ServiceFile = r.deps.ServiceRegistered(r.cfg.ServiceFile)
	if !p.ServiceFile && r.cmd != outcome.Uninstall {
		return p
	}
	p.StatusRunning = r.statusRunning()
	return p
}

func (r *run) statusRunning() bool {
	if !r.deps.Executable(r.cfg.Ctrld) {
		return false // uninstall --cleanup removes the binary itself
	}
	ctx, cancel := context.WithTimeout(r.budget, statusBudget)
	defer cancel()
	c := r.command("status")
	c.Brief = true
	res, err := r.deps.Run(ctx, c)
	return err == nil && !res.TimedOut && !res.Canceled && res.ExitCode == 0
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

func recordPath(home string) string { return home + string(os.PathSeparator) + record.FileName }

// unsafeHome reports whether the home was refused because someone else
// may control it, rather than because it cannot be created or read.
func unsafeHome(err error) bool {
	for _, e := range []error{home.ErrSymlink, home.ErrNotOwned, home.ErrWritable} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
