package install

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/decide"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/plan"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
	"github.com/Control-D-Inc/ctrld-install/internal/store"
)

// A change over a healthy device is a transaction. transact is all of it,
// in the contract's order; each step writes its journal phase where it is
// taken:
//
//	step       phase          what
//	time       (none)         an attempt's time and rollbackReserve left, or nothing starts
//	keep       snapshot       the provisioning and the build that run, on disk (txFile)
//	apply      applying       the action, within the budget less the reserve
//	verify     verifying      device evidence (verification.go), within the same bound
//	roll back  rolling-back   once, with the reserve, when the device went down
//	remember   (final)        a fatal cause only; a verified change is on probation
//
// A run that finds a running record past snapshot whose process is gone
// finishes the transaction from txFile (finishCutShort), and a later run
// that finds the device healthy confirms it (confirm).

// rollbackReserve is the time a rollback needs: ctrld restart, up to 17 s
// under systemd (13 s under SysV), and the device's evidence after it.
// The action and its verification never use it.
const rollbackReserve = 25 * time.Second

// txFile is the transaction's private journal. State says where it is:
// txOpen from before the service is touched until the run ends; txProbation
// once the change verified, until a later run confirms it.
type txFile struct {
	Version int    `json:"version"`
	State   string `json:"state"`
	Action  string `json:"action"` // plan.Action's words
	// What ran before: the provisioning from the service definition (""
	// when it could not be read), the build by its hash ("" when none is
	// kept), and its version for the rolled-back line.
	Resolver string   `json:"resolver,omitempty"`
	Extra    []string `json:"extra,omitempty"`
	Build    string   `json:"build,omitempty"`
	Ctrld    string   `json:"ctrld_version,omitempty"`
}

const (
	txOpen      = "open"
	txProbation = "probation"
)

func (r *run) readTx() (txFile, bool) {
	if r.journal == nil {
		return txFile{}, false
	}
	return readTx(r.cfg.Home)
}

func readTx(home string) (txFile, bool) {
	var t txFile
	if !store.Read(home, store.Tx, &t) || t.Version != 1 {
		return txFile{}, false
	}
	return t, t.State == txOpen || t.State == txProbation
}

// cutShort reports whether a change was left unfinished in home: a
// transaction still open once no run holds the lock, by a run that got
// past keeping what ran (rec is the record it left).
func cutShort(home string, rec *record.Record) bool {
	t, ok := readTx(home)
	if !ok || t.State != txOpen {
		return false
	}
	return rec == nil || rec.Result != record.ResultRunning || rec.Phase != record.PhaseSnapshot
}

func (r *run) writeTx(t txFile) error {
	t.Version = 1
	return store.Write(r.cfg.Home, store.Tx, t)
}

// transact applies p to the healthy device obs.
func (r *run) transact(p plan.Plan, obs plan.Observation, secret Secret) decide.Evidence {
	if r.timeLeft() < r.minAttempt()+rollbackReserve {
		r.out.Errorf("too little of the time limit is left to change a healthy device and bring it back should the change fail; nothing was changed")
		return decide.Evidence{Ran: decide.RanStart, TimedOut: true, ExitCode: -1}
	}

	r.journal.phase(record.PhaseSnapshot)
	t, why := r.snapshot(p, obs)
	if why != "" {
		r.out.Infof("plan: %s%s", plan.ReasonNoRollback, why)
		r.noRollback = true
	}
	if err := r.writeTx(t); err != nil {
		// Without it a run cut short could not be finished by the next.
		r.out.Infof("plan: %swhat runs now cannot be written to the home directory", plan.ReasonNoRollback)
		r.noRollback = true
	}

	// The action and its verification run within the budget less the
	// reserve: whatever ctrld does, the rollback keeps its time.
	budget := r.budget
	deadline, _ := budget.Deadline()
	act, cancel := context.WithDeadline(budget, deadline.Add(-rollbackReserve))
	r.budget = act
	ev := r.apply(p, secret, txPhases)
	r.budget = budget
	cancel()

	c, _ := decide.Decide(ev)
	switch {
	case c.IsOK():
		t.State = txProbation
		_ = r.writeTx(t)
		return ev
	case r.noRollback:
		// Nothing kept to bring back: the next run must not take the
		// file for a change it can finish.
		_ = store.Remove(r.cfg.Home, store.Tx)
		return ev
	case r.interrupted():
		// The next run finishes it: the journal says where it stopped.
		return ev
	}
	if r.rollBack(t) {
		r.refuse(p, c, secret, obs)
	}
	return ev
}

// phases are the journal's words for running ctrld and checking after it.
type phases struct{ running, checking string }

var (
	plainPhases = phases{record.PhaseCtrldRunning, record.PhaseChecking}
	txPhases    = phases{record.PhaseApplying, record.PhaseVerifying}
)

// apply runs the plan's action.
func (r *run) apply(p plan.Plan, secret Secret, ph phases) decide.Evidence {
	switch p.Action {
	case plan.Upgrade:
		return r.restart(outcome.ActionUpgraded, ph)
	case plan.Repair:
		return r.restart(outcome.ActionRepaired, ph)
	}
	ev, err := r.provision(secret, ph)
	if err != nil {
		return decide.Evidence{Installer: failureCode(err)}
	}
	return ev
}

func failureCode(err error) *codes.Code {
	var f *Failure
	if errors.As(err, &f) {
		return &f.Code
	}
	c := codes.Must(codes.InstallerFailed)
	return &c
}

// snapshot is what runs before the change: the provisioning the service
// definition holds and the build the daemon runs, kept. why says, in
// fixed words, why the change could not be rolled back; "" when it can.
func (r *run) snapshot(p plan.Plan, obs plan.Observation) (txFile, string) {
	t := txFile{State: txOpen, Action: p.Action.String()}
	if def, ok := r.deps.Definition(r.cfg.ServiceFile); ok {
		t.Resolver, t.Extra, _ = def.Provisioning()
	}
	if v := r.runningVersion(obs); v != nil {
		t.Ctrld = parse.DisplayVersion(v)
	}
	// A provisioning leaves the binary as it is: what it needs is the
	// resolver and flags. A restart needs the build that runs.
	if p.Action == plan.Provision {
		if t.Resolver == "" {
			return t, "the service definition does not say which resolver it runs"
		}
		return t, ""
	}
	build, why := r.keepRunningBuild(obs)
	t.Build = build
	return t, why
}

// runningVersion is the version of the daemon that runs: the file on disk
// when it runs that, else what the last run recorded.
func (r *run) runningVersion(obs plan.Observation) *parse.Version {
	if obs.Binary == parse.SameYes {
		return r.version
	}
	if v := recordedVersion(r.prev); v != nil {
		return v
	}
	if obs.Binary == parse.SameUnknown {
		return r.version
	}
	return nil
}

// keepRunningBuild makes sure the build the daemon runs is kept, and
// returns its hash. The file on disk is that build only when the device
// says the daemon was started from it: a healthy daemon then verifies it.
// Otherwise the kept copy is what runs, if a run kept one.
func (r *run) keepRunningBuild(obs plan.Observation) (string, string) {
	kept, ok := r.keptInfo()
	if obs.Binary == parse.SameYes {
		if ok && r.onDiskIs(kept) {
			return kept.SHA256, ""
		}
		info, err := r.keepBuild()
		if err != nil {
			return "", keepFailure(err)
		}
		return info.SHA256, ""
	}
	if ok {
		return kept.SHA256, ""
	}
	// A package replaced the binary before any build was kept: where the
	// kernel still shows the daemon's own, that is the build that runs.
	if exe := r.daemonExecutable(); exe != "" && obs.Binary == parse.SameNo {
		info, err := r.keepBuildFrom(exe)
		if err != nil {
			return "", keepFailure(err)
		}
		return info.SHA256, ""
	}
	if obs.Binary == parse.SameUnknown {
		return "", "the device cannot tell which ctrld binary the running daemon was started from, and none was kept"
	}
	return "", "the ctrld build that runs was replaced on disk before it was kept"
}

func keepFailure(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		return "the ctrld binary could not be copied within the time limit"
	case errors.Is(err, safefile.ErrUntrusted):
		return "the kept copy in the home directory has a second name (a hard link) or another owner, and is not trusted"
	}
	return "a copy of the ctrld binary cannot be written to the home directory (no space, or not allowed)"
}

// rollBack brings back what t kept, once: the kept build by rename when
// the file on disk is another, then the service restarted (an upgrade or
// a repair left its definition) or provisioned again with the kept
// resolver and flags. It reports whether it was needed: a device healthy
// again anyway (ctrld stopped nothing) is left alone.
func (r *run) rollBack(t txFile) bool {
	if r.postConditions().Healthy() {
		defer store.Remove(r.cfg.Home, store.Tx)
		// ctrld stopped nothing, or the old daemon outlived a restart that
		// failed: nothing runs to bring back, but a refused build left on
		// disk is what the next boot would start.
		if t.Build == "" {
			return false
		}
		if h, err := store.FileSHA256(r.budget, r.cfg.Ctrld); err != nil || h == t.Build || r.restoreBinary(t.Build) != nil {
			return false
		}
		r.action, r.rolledBack = outcome.ActionRolledBack, outcome.RollbackOK
		if v, err := parse.ParseVersion(t.Ctrld); err == nil {
			r.version = v
		}
		r.out.Infof("%s", outcome.RolledBackLine(t.Ctrld))
		return true
	}
	r.journal.phase(record.PhaseRollingBack)
	defer store.Remove(r.cfg.Home, store.Tx)
	ok := r.restoreKept(t)
	r.action = outcome.ActionRolledBack
	if !ok {
		r.rolledBack = outcome.RollbackFailed
		r.out.Infof("%s", outcome.LineRollbackFailed)
		return true
	}
	r.rolledBack = outcome.RollbackOK
	// The record names the version that runs: the next run must not take
	// the refused build for the running one.
	if v, err := parse.ParseVersion(t.Ctrld); err == nil {
		r.version = v
	}
	r.out.Infof("%s", outcome.RolledBackLine(t.Ctrld))
	return true
}

// restoreKept does the rollback's work and verifies it.
func (r *run) restoreKept(t txFile) bool {
	if t.Build != "" {
		if h, err := store.FileSHA256(r.budget, r.cfg.Ctrld); err != nil || h != t.Build {
			if r.restoreBinary(t.Build) != nil {
				return false
			}
		}
	}
	var args []string
	switch t.Action {
	case plan.Provision.String():
		if t.Resolver == "" {
			return false
		}
		args = append([]string{"start", FlagResolver, t.Resolver}, t.Extra...)
	default:
		args = r.form(parse.FeatureRestart)
	}
	c := r.command(args...)
	if sd, ok := r.systemd(); ok && args[0] != "start" {
		// The unit of a build that died waits out its RestartSec, and
		// ctrld restart with it: far past the reserve.
		c = r.systemctl(sd, "restart", sd.Unit)
	}
	name := "restart"
	if args[0] == "start" {
		name = "start"
	}
	res, err := r.change(c, name)
	if err != nil || res.TimedOut || res.Canceled {
		return false
	}
	return r.settled().Healthy()
}

// refuse remembers what a rollback undid, for a cause a rerun cannot
// change: the build on disk when the change brought it, the request when
// it provisioned. A retryable cause (the API did not answer, the time ran
// out) is tried again at the next run.
func (r *run) refuse(p plan.Plan, cause codes.Code, secret Secret, obs plan.Observation) {
	if cause.Class != codes.ClassFatal {
		return
	}
	ref, _ := r.refused()
	ref.Version, ref.Code = 1, cause.Name
	if obs.Binary == parse.SameNo && p.Action != plan.Provision {
		if h, err := r.refusedBuildHash(); err == nil {
			ref.Build = h
		}
	}
	if p.Action == plan.Provision && secret.Given() {
		if h, err := store.NewKeyedHash(requestText(secret, r.cfg.Extra)); err == nil {
			ref.Request = h
		}
	}
	_ = store.Write(r.cfg.Home, store.Refused, ref)
}

// refusedBuildHash is the hash of the build the change brought: the file
// on disk before the rollback put the kept one back, which the restore
// copied aside as it replaced it.
func (r *run) refusedBuildHash() (string, error) {
	if r.replaced != "" {
		return r.replaced, nil
	}
	return store.FileSHA256(r.budget, r.cfg.Ctrld)
}

// txPhase reports whether phase is a transaction's, past keeping what ran:
// finishCutShort, not the record alone, says what such a run came to.
func txPhase(phase string) bool {
	switch phase {
	case record.PhaseApplying, record.PhaseVerifying, record.PhaseRollingBack:
		return true
	}
	return false
}

// finishCutShort finishes a transaction a run left unfinished: its record
// still says running past snapshot, and since this run holds the lock, its
// process is gone (killed, or the device restarted). A healthy device
// keeps the change, on probation; one that is not is brought back once.
// done says the run ends here, with ev.
func (r *run) finishCutShort() (ev decide.Evidence, done bool) {
	t, ok := r.readTx()
	if !ok || t.State != txOpen {
		return decide.Evidence{}, false
	}
	if !cutShort(r.cfg.Home, r.prev) {
		// Killed before it touched the service: nothing to finish.
		_ = store.Remove(r.cfg.Home, store.Tx)
		return decide.Evidence{}, false
	}
	// Killed before or while ctrld acted: the old daemon may still run,
	// and is as good as the new one.
	post := r.settle(false)
	if post.Healthy() {
		r.out.Infof("plan: %s", plan.ReasonCutShortHealthy)
		t.State = txProbation
		_ = r.writeTx(t)
		return decide.Evidence{}, false
	}
	r.out.Infof("plan: %s", plan.ReasonCutShortUnhealthy)
	ev = decide.Evidence{Ran: decide.RanNothing, Post: post}
	if !r.rollBack(t) {
		return decide.Evidence{}, false
	}
	return ev, true
}

// confirm ends the probation of a change that a later run finds healthy:
// the build it brought is now the one kept.
func (r *run) confirm(post decide.PostConditions, obs plan.Observation) {
	t, ok := r.readTx()
	if !ok || t.State != txProbation || !post.Healthy() || obs.Binary != parse.SameYes {
		return
	}
	if _, err := r.keepBuild(); err == nil {
		_ = store.Remove(r.cfg.Home, store.Tx)
	}
}

// onProbation is the change not yet confirmed, if any.
func (r *run) onProbation() (txFile, bool) {
	t, ok := r.readTx()
	return t, ok && t.State == txProbation
}

// keptInfo is the kept build, when there is one and the run has a home.
func (r *run) keptInfo() (store.Build, bool) {
	if r.journal == nil {
		return store.Build{}, false
	}
	return store.KeptBuild(r.cfg.Home)
}

// onDiskIs reports whether the binary at --ctrld is the kept build.
func (r *run) onDiskIs(b store.Build) bool { return b.Is(r.cfg.Ctrld) }

func (r *run) daemonExecutable() string {
	if r.deps.DaemonExecutable == nil {
		return ""
	}
	def, _ := r.deps.Definition(r.cfg.ServiceFile)
	return r.deps.DaemonExecutable(r.budget, def.PIDFile)
}

// keepBuild copies the binary at --ctrld into the home as the kept build.
// Only a build the device verified is kept: the caller knows it runs, healthy.
func (r *run) keepBuild() (store.Build, error) {
	if b, ok := r.keptInfo(); ok && r.onDiskIs(b) {
		return b, nil
	}
	return r.keepBuildFrom(r.cfg.Ctrld)
}

// keepBuildFrom keeps the build at path, the file at --ctrld or the
// running daemon's own.
func (r *run) keepBuildFrom(path string) (store.Build, error) {
	if r.journal == nil {
		return store.Build{}, errors.New("no home")
	}
	version := ""
	if path == r.cfg.Ctrld && r.version != nil {
		version = parse.DisplayVersion(r.version)
	}
	return store.Keep(r.budget, r.cfg.Home, path, path == r.cfg.Ctrld, version)
}

// restoreBinary puts the kept build whose hash is want back at --ctrld.
func (r *run) restoreBinary(want string) error {
	replaced, err := store.Restore(r.budget, r.cfg.Home, want, r.cfg.Ctrld)
	if replaced != "" {
		r.replaced = replaced
	}
	return err
}

// refusedFile is what was rolled back here for a fatal cause: a build by
// its hash, a request by its keyed hash, and the code that ended it.
type refusedFile struct {
	Version int              `json:"version"`
	Code    string           `json:"code"`
	Build   string           `json:"build,omitempty"`
	Request *store.KeyedHash `json:"request,omitempty"`
}

func requestText(s Secret, extra []string) string {
	return s.flag + "\x00" + s.value + "\x00" + strings.Join(parse.RequestedFlags(extra, s.IsToken()), "\x00")
}

// refused reads what was rolled back here before.
func (r *run) refused() (refusedFile, bool) {
	var f refusedFile
	if r.journal == nil || !store.Read(r.cfg.Home, store.Refused, &f) || f.Version != 1 {
		return refusedFile{}, false
	}
	if c, ok := codes.Lookup(f.Code); !ok || c.Class != codes.ClassFatal {
		return refusedFile{}, false
	}
	return f, true
}

// observeRefused marks what this run would do again that was rolled back
// on this healthy device before. The binary is hashed only when a build
// was refused.
func (r *run) observeRefused(o *plan.Observation, secret Secret) {
	ref, ok := r.refused()
	if !ok || !o.Healthy() {
		return
	}
	if ref.Build != "" {
		if h, err := store.FileSHA256(r.budget, r.cfg.Ctrld); err == nil && h == ref.Build {
			o.RefusedBuild = true
		}
	}
	if secret.Given() && ref.Request.Matches(requestText(secret, r.cfg.Extra)) {
		o.RefusedRequest = true
	}
	r.refusedCode = ref.Code
}

// forgetRefused drops what a verified success shows is not refused any
// more: the build on disk, the request made.
func (r *run) forgetRefused(secret *Secret) {
	ref, ok := r.refused()
	if !ok {
		return
	}
	changed := false
	if ref.Build != "" {
		if h, err := store.FileSHA256(r.budget, r.cfg.Ctrld); err == nil && h == ref.Build {
			ref.Build, changed = "", true
		}
	}
	if secret != nil && secret.Given() && ref.Request.Matches(requestText(*secret, r.cfg.Extra)) {
		ref.Request, changed = nil, true
	}
	switch {
	case ref.Build == "" && ref.Request == nil:
		_ = store.Remove(r.cfg.Home, store.Refused)
	case changed:
		_ = store.Write(r.cfg.Home, store.Refused, ref)
	}
}

// restoreKeptOnDisk puts the kept build back on disk when a package put
// another there; only then: a rename of the same build changes nothing.
func (r *run) restoreKeptOnDisk() {
	if info, ok := r.keptInfo(); ok && !r.onDiskIs(info) {
		_ = r.restoreBinary(info.SHA256)
	}
}

// refusedEvidence ends a run whose plan refused: the code the rollback
// ended with, nothing run. A package that put the refused build back on
// disk has the kept one put back in its place.
func (r *run) refusedEvidence(p plan.Plan) decide.Evidence {
	if p.RestoreBinary {
		r.restoreKeptOnDisk()
		// What runs is the build the last run left running, not the
		// refused one --version answered for.
		if v := recordedVersion(r.prev); v != nil {
			r.version = v
		}
	}
	c, ok := codes.Lookup(r.refusedCode)
	if !ok {
		c = codes.Must(codes.InstallerFailed)
	}
	return decide.Evidence{Ran: decide.RanNothing, Refused: &c}
}
