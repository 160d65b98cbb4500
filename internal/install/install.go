// Package install is the provisioning pipeline: checks before ctrld runs,
// `ctrld --version`, `ctrld start` under the budget, the evidence it leaves,
// the post-conditions after exit 0, and the outcome on every surface.
package install

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/decide"
	"github.com/Control-D-Inc/ctrld-install/internal/lock"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/resultfile"
	"github.com/Control-D-Inc/ctrld-install/internal/runner"
)

// Secret is how ctrld is told whom it belongs to: the provisioning token
// (--cd-org) or a resolver ID (--cd). Its value goes to ctrld's argv and
// nowhere else; String hides it from any accidental formatting.
type Secret struct {
	flag  string
	value string
}

// Token returns a provisioning-token secret.
func Token(v string) Secret { return Secret{flag: "--cd-org", value: v} }

// Resolver returns a resolver-ID secret.
func Resolver(v string) Secret { return Secret{flag: "--cd", value: v} }

// String never shows the value.
func (s Secret) String() string { return s.flag + " <redacted>" }

// GoString never shows the value.
func (s Secret) GoString() string { return s.String() }

// Config is a validated install request.
type Config struct {
	Ctrld       string // absolute path of the ctrld binary
	CtrldArgv0  string // argv[0] for ctrld; its path when empty
	Home        string
	ResultFile  string
	ServiceFile string // "" where the platform checks its service manager instead
	Timeout     time.Duration
	Retries     int
	Grace       time.Duration // SIGTERM to SIGKILL for ctrld's group
	Secret      Secret
	Extra       []string // passed to ctrld start after the secret
	MinVersion  *semver.Version
	Force       bool // provision even when ctrld is already provisioned and running

	InstallerVersion string
	Env              []string // the child's environment, NO_COLOR included

	// Privileged reports whether the process may install services.
	Privileged func() (bool, error)
	// ServiceRegistered is the service-definition post-condition.
	ServiceRegistered func(serviceFile string) bool

	// Fault makes the pipeline meet an installer failure on purpose, for
	// --simulate; zero in real runs.
	Fault Fault
}

// Fault lists the installer failures --simulate can arrange.
type Fault struct {
	NotRoot  bool
	HoldLock bool
}

// versionBudget caps `ctrld --version`, which prints one line and exits.
const versionBudget = 15 * time.Second

// statusBudget caps `ctrld status`; it asks the service manager and exits.
const statusBudget = 30 * time.Second

// Run provisions ctrld and returns the summary of the outcome, which the
// caller prints and turns into the exit status. ctx carries the signals that
// interrupt the run; the time budget is applied here.
func Run(ctx context.Context, cfg Config, out *report.Printer) record.Summary {
	r := &run{cfg: cfg, out: out, start: time.Now(), sigCtx: ctx}
	s := r.provision()
	s.ElapsedMS = time.Since(r.start).Milliseconds()
	s.InstallerVersion = cfg.InstallerVersion
	s.Attempts = r.attempts
	if r.version != nil {
		v := parse.DisplayVersion(r.version)
		s.CtrldVersion = &v
	}
	if s.ResultFile == "" {
		s.ResultFile = string(resultfile.Absent)
	}
	r.writeRecord(record.New(s, time.Now()), true)
	r.lock.Release()
	return s
}

type run struct {
	cfg      Config
	out      *report.Printer
	start    time.Time
	sigCtx   context.Context
	budget   context.Context
	attempts int
	version  *semver.Version
	lock     *lock.Lock
	homeOK   bool
	workDir  string
}

func (r *run) provision() record.Summary {
	var cancel context.CancelFunc
	r.budget, cancel = context.WithTimeout(r.sigCtx, r.cfg.Timeout)
	defer cancel()

	priv, err := r.cfg.Privileged()
	if err != nil || !priv || r.cfg.Fault.NotRoot {
		return r.installerFailure(codes.InstallerNotRoot)
	}
	if s, failed := r.prepareHome(); failed {
		return s
	}
	defer r.cleanupWorkDir()
	r.journal(record.PhaseStarted)
	if !executable(r.cfg.Ctrld) {
		return r.installerFailure(codes.CtrldNotFound)
	}
	if s, failed := r.checkVersion(); failed {
		return s
	}
	// ctrld start uninstalls the running service before it tries, so a
	// failed re-run would leave a protected machine unprotected. MDM tools
	// re-run install scripts on every check-in; leave a healthy ctrld alone.
	if !r.cfg.Force {
		if p := r.postConditions(); p.ServiceFile && p.StatusRunning {
			s := record.NewSummary(codes.Must(codes.OK))
			s.Source = string(decide.SourcePostConditions)
			s.Action = record.ActionSkipped
			return s
		}
		if r.interrupted() {
			return r.installerFailure(codes.InstallerInterrupted)
		}
	}
	for {
		s := r.attempt()
		wait, again := r.retryWait(s)
		if !again {
			return s
		}
		c := codes.Must(s.Code)
		r.out.Infof("attempt %d failed: stage=%s code=%s (exit %d); retrying in %s", r.attempts, c.Stage, c.Name, c.Exit, wait)
		select {
		case <-r.budget.Done():
			if r.interrupted() {
				return r.installerFailure(codes.InstallerInterrupted)
			}
			return s
		case <-time.After(wait):
		}
	}
}

// Retry waits grow from firstRetryWait, doubling up to maxRetryWait. An
// attempt is only worth starting with minAttemptTime left after the wait:
// ctrld's own API call alone can take 40 s.
const (
	firstRetryWait = 10 * time.Second
	maxRetryWait   = 60 * time.Second
	minAttemptTime = 30 * time.Second
)

// retryWait says whether the outcome s is tried again and after how long.
func (r *run) retryWait(s record.Summary) (time.Duration, bool) {
	if s.Class != string(codes.ClassRetryable) || r.attempts > r.cfg.Retries || r.interrupted() {
		return 0, false
	}
	wait := firstRetryWait << (r.attempts - 1)
	if wait > maxRetryWait || wait <= 0 {
		wait = maxRetryWait
	}
	if r.timeLeft() < wait+minAttemptTime {
		return 0, false
	}
	return wait, true
}

// prepareHome creates ctrld's home when missing, takes the run lock there
// and picks the child's working directory. A home that cannot be used does
// not stop the run: ctrld may still succeed, and the outcome is printed and
// exited with even when it cannot be recorded.
func (r *run) prepareHome() (record.Summary, bool) {
	if err := os.MkdirAll(r.cfg.Home, 0o750); err == nil {
		if fi, err := os.Stat(r.cfg.Home); err == nil && fi.IsDir() {
			r.homeOK = true
		}
	}
	if r.homeOK {
		if r.cfg.Fault.HoldLock {
			// Another holder, as a second run would be: the lock is per open file.
			if holder, err := lock.Acquire(r.budget, r.cfg.Home); err == nil {
				defer holder.Release()
			}
		}
		l, err := lock.Acquire(r.budget, r.cfg.Home)
		switch {
		case err == nil:
			r.lock = l
		case errors.Is(err, lock.ErrBusy):
			if r.interrupted() {
				return r.installerFailure(codes.InstallerInterrupted), true
			}
			// Without the lock this run must not touch the record the
			// holder is writing.
			r.homeOK = false
			return r.installerFailure(codes.InstallerBusy), true
		default:
			r.homeOK = false
		}
		r.workDir = r.cfg.Home
	}
	if !r.homeOK {
		// The path is not repeated: it came from the command line.
		r.out.Errorf("the home directory (--home) cannot hold the run lock and the outcome record; continuing without them")
	}
	if r.workDir == "" {
		// Never ctrld-install's own working directory: ctrld reads config
		// files from its working directory.
		d, err := os.MkdirTemp("", "ctrld-install-*")
		if err != nil {
			return r.installerFailure(codes.InstallerFailed), true
		}
		r.workDir = d
	}
	return record.Summary{}, false
}

func (r *run) cleanupWorkDir() {
	if r.workDir != "" && r.workDir != r.cfg.Home {
		os.RemoveAll(r.workDir)
	}
}

func (r *run) interrupted() bool { return r.sigCtx.Err() != nil }

func (r *run) installerFailure(name string) record.Summary {
	s := record.NewSummary(codes.Must(name))
	s.Source = string(decide.SourceInstaller)
	s.Action = record.ActionProvisioned
	return s
}

func (r *run) recordPath() string { return filepath.Join(r.cfg.Home, record.FileName) }

// journal records the phase reached. The first entry is durable, so that
// even a power cut leaves "running" in place of the previous outcome; later
// phases only refine it.
func (r *run) journal(phase string) {
	if r.homeOK {
		r.writeRecord(record.Running(phase, os.Getpid(), r.cfg.InstallerVersion, time.Now()), phase == record.PhaseStarted)
	}
}

func (r *run) writeRecord(rec record.Record, durable bool) {
	if !r.homeOK {
		return
	}
	write := record.WriteUnsynced
	if durable {
		write = record.Write
	}
	if err := write(r.recordPath(), rec); err != nil {
		r.homeOK = false // say it once
		r.out.Errorf("the outcome record cannot be written in the home directory (--home)")
	}
}

// checkVersion runs `ctrld --version`. Its output is parsed for a semver
// version only; an unknown version (a dev build) is allowed.
func (r *run) checkVersion() (record.Summary, bool) {
	ctx, cancel := context.WithTimeout(r.budget, versionBudget)
	defer cancel()
	var buf bytes.Buffer
	res, err := runner.Run(ctx, runner.Command{
		Path: r.cfg.Ctrld, Argv0: r.cfg.CtrldArgv0, Args: []string{"--version"}, Dir: r.workDir, Env: r.cfg.Env, Grace: r.cfg.Grace,
		Line: func(b []byte) {
			if buf.Len() < 4<<10 {
				buf.Write(b)
				buf.WriteByte('\n')
			}
		},
	})
	if err != nil {
		return r.startFailure(err), true
	}
	if res.Canceled && r.interrupted() {
		return r.installerFailure(codes.InstallerInterrupted), true
	}
	if res.TimedOut && r.budget.Err() != nil {
		s := record.NewSummary(codes.Must(codes.CtrldTimeout))
		s.Source = string(decide.SourceExitStatus)
		s.Action = record.ActionProvisioned
		return s, true
	}
	if res.ExitCode == 0 {
		if v, err := parse.CtrldVersion(&buf); err == nil {
			r.version = v
		}
	}
	if r.cfg.MinVersion != nil && r.version != nil && r.version.LessThan(r.cfg.MinVersion) {
		return r.installerFailure(codes.CtrldVersionUnsupported), true
	}
	return record.Summary{}, false
}

// startFailure maps a failure to start ctrld: a missing or non-executable
// file is CTRLD_NOT_FOUND; anything else (a corrupt binary, no resources) is
// ctrld-install's own failure.
func (r *run) startFailure(err error) record.Summary {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return r.installerFailure(codes.CtrldNotFound)
	}
	return r.installerFailure(codes.InstallerFailed)
}

// attempt runs ctrld start once and decides the outcome.
func (r *run) attempt() record.Summary {
	r.attempts++
	r.journal(record.PhaseCtrldRunning)
	r.out.Infof("running ctrld start (%s, attempt %d of %d, time left %s)",
		r.versionWords(), r.attempts, 1+r.cfg.Retries, r.timeLeft())

	attemptStart := time.Now()
	ev := decide.Evidence{}
	classifier := parse.NewClassifier()
	args := append([]string{"start", r.cfg.Secret.flag, r.cfg.Secret.value}, r.cfg.Extra...)
	res, err := runner.Run(r.budget, runner.Command{
		Path: r.cfg.Ctrld, Argv0: r.cfg.CtrldArgv0, Args: args, Dir: r.workDir, Env: r.cfg.Env, Grace: r.cfg.Grace,
		Line: func(b []byte) {
			if ev.Identifier == nil {
				if c, ok := parse.IdentifierLine(b); ok {
					found := c // only a found line costs an allocation
					ev.Identifier = &found
				}
			}
			classifier.Line(b)
		},
	})
	if err != nil {
		return r.startFailure(err)
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
	ev.ResultFile = resultfile.Inspect(r.cfg.ResultFile, attemptStart)

	if decide.NeedsPostConditions(ev) {
		r.journal(record.PhaseChecking)
		ev.Post = r.postConditions()
		if r.interrupted() {
			c := codes.Must(codes.InstallerInterrupted)
			ev.Installer = &c
		}
	}
	o := decide.Decide(ev)
	s := record.NewSummary(o.Code)
	s.Source = string(o.Source)
	s.Action = record.ActionProvisioned
	s.ResultFile = string(ev.ResultFile.Status)
	return s
}

// postConditions checks what success needs after exit 0: the service
// definition exists and ctrld status says the service runs.
func (r *run) postConditions() decide.PostConditions {
	p := decide.PostConditions{Checked: true}
	p.ServiceFile = r.cfg.ServiceRegistered(r.cfg.ServiceFile)
	if !p.ServiceFile {
		return p
	}
	ctx, cancel := context.WithTimeout(r.budget, statusBudget)
	defer cancel()
	res, err := runner.Run(ctx, runner.Command{
		Path: r.cfg.Ctrld, Argv0: r.cfg.CtrldArgv0, Args: []string{"status"}, Dir: r.workDir, Env: r.cfg.Env, Grace: r.cfg.Grace,
	})
	p.StatusRunning = err == nil && !res.TimedOut && !res.Canceled && res.ExitCode == 0
	return p
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
	left := time.Until(d).Round(time.Second)
	if left < 0 {
		left = 0
	}
	return left
}

// executable reports whether p is a regular file ctrld-install may run.
func executable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	if isWindows {
		return strings.EqualFold(filepath.Ext(p), ".exe")
	}
	return fi.Mode().Perm()&0o111 != 0
}

// Verify checks now what success requires, starting and changing nothing.
// It needs the same privileges as install, because ctrld status does.
func Verify(ctx context.Context, cfg Config) record.Summary {
	r := &run{cfg: cfg, start: time.Now(), sigCtx: ctx}
	var cancel context.CancelFunc
	r.budget, cancel = context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	s := r.verify()
	s.Action = "" // verify changes nothing
	s.ElapsedMS = time.Since(r.start).Milliseconds()
	s.InstallerVersion = cfg.InstallerVersion
	s.ResultFile = string(resultfile.Absent)
	return s
}

func (r *run) verify() record.Summary {
	priv, err := r.cfg.Privileged()
	if err != nil || !priv {
		return r.installerFailure(codes.InstallerNotRoot)
	}
	if !executable(r.cfg.Ctrld) {
		return r.installerFailure(codes.CtrldNotFound)
	}
	d, err := os.MkdirTemp("", "ctrld-install-*")
	if err != nil {
		return r.installerFailure(codes.InstallerFailed)
	}
	r.workDir = d
	defer r.cleanupWorkDir()
	o := decide.Decide(decide.Evidence{ExitCode: 0, Post: r.postConditions()})
	if r.interrupted() {
		return r.installerFailure(codes.InstallerInterrupted)
	}
	s := record.NewSummary(o.Code)
	s.Source = string(o.Source)
	return s
}
