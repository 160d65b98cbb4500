package install

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/decide"
	"github.com/Control-D-Inc/ctrld-install/internal/dnscheck"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/plan"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
)

// A change over a healthy device is a transaction: what runs is kept
// before it is touched, the change is verified by evidence from the
// device, and what ran before is brought back, once, when it does not
// hold. What was refused is remembered so that the same package or policy,
// pushed again at every check-in, does not take the device down again.

// Files in the home, root's and private, as the fingerprint is.
const (
	// keptBinaryName is a copy of the last ctrld build that verified here,
	// replaced only by a build that verified: what an upgrade that fails is
	// rolled back to, since a package replaced the file on disk.
	keptBinaryName = ".ctrld-install.kept-ctrld"
	// keptInfoName says which file the copy was made from, so a run tells
	// by its size and time whether the binary on disk is still that build
	// without reading it.
	keptInfoName = ".ctrld-install.kept.json"
	// refusedName is what was rolled back here: a build by its hash, a
	// request by a keyed fingerprint, and the code that ended it.
	refusedName = ".ctrld-install.refused"
)

// SettleWindow is how long a daemon is given to come up and answer after
// the command that started it returned: ctrld's service manager may start
// it a moment later. Polled within the budget, first after settlePoll,
// then at twice the last wait, at most settlePollMax: a daemon that comes
// up at once is seen at once, and one that never does costs a few ctrld
// status calls, not thirty.
const (
	SettleWindow  = 15 * time.Second
	settlePoll    = 250 * time.Millisecond
	settlePollMax = 2 * time.Second
	// dnsWait bounds one question to the listener.
	dnsWait = 2 * time.Second
)

// rollbackTime is what a rollback needs left of the budget: a ctrld start
// or restart and its verification. An action over a healthy device starts
// only with an attempt's time and this left.
func (r *run) rollbackTime() time.Duration { return min(minAttemptTime, r.cfg.Timeout/4) }

// private are the rules of the files above.
var private = safefile.Rules{Owner: safefile.Self(), Private: true, OneLink: true}

type keptInfo struct {
	Version int    `json:"version"`
	Size    int64  `json:"size"`
	ModNS   int64  `json:"mod_ns"`
	SHA256  string `json:"sha256"`
	Ctrld   string `json:"ctrld_version,omitempty"` // the build's version, as DisplayVersion writes it
}

type refusedFile struct {
	Version int          `json:"version"`
	Code    string       `json:"code"`
	Build   string       `json:"build,omitempty"` // sha256 of the refused binary
	Request *requestHash `json:"request,omitempty"`
}

// requestHash is a keyed, slow fingerprint of a request: the secret's kind
// and value and the extra flags, as the token's fingerprint is made.
type requestHash struct {
	Salt       []byte `json:"salt"`
	Iterations int    `json:"iterations"`
	Hash       []byte `json:"hash"`
}

func requestText(s Secret, extra []string) string {
	return s.flag + "\x00" + s.value + "\x00" + strings.Join(parse.RequestedFlags(extra, s.IsToken()), "\x00")
}

func newRequestHash(s Secret, extra []string) (*requestHash, error) {
	salt := make([]byte, 32)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	return &requestHash{Salt: salt, Iterations: fingerprintIterations, Hash: derive(requestText(s, extra), salt, fingerprintIterations)}, nil
}

func (h *requestHash) matches(s Secret, extra []string) bool {
	if h == nil || len(h.Salt) != 32 || h.Iterations < fingerprintIterations || h.Iterations > 100*fingerprintIterations {
		return false
	}
	return hmac.Equal(h.Hash, derive(requestText(s, extra), h.Salt, h.Iterations))
}

// readPrivate decodes a small private JSON file of the home into v.
func readPrivate(path string, v any) bool {
	f, _, err := safefile.Open(path, private)
	if err != nil {
		return false
	}
	defer f.Close()
	return json.NewDecoder(io.LimitReader(f, 16<<10)).Decode(v) == nil
}

// writePrivate replaces a private file of the home atomically.
func writePrivate(home, name string, write func(io.Writer) error, perm fs.FileMode) error {
	rnd := make([]byte, 8)
	if _, err := rand.Read(rnd); err != nil {
		return err
	}
	tmp := filepath.Join(home, ".ctrld-install-"+hex.EncodeToString(rnd)+".tmp")
	f, _, err := safefile.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm,
		safefile.Rules{Owner: safefile.Self(), Private: true, FixMode: perm, AdminsOnly: true})
	if err != nil {
		return err
	}
	werr := write(f)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, filepath.Join(home, name))
	}
	if werr != nil {
		os.Remove(tmp)
	}
	return werr
}

func writeJSON(v any) func(io.Writer) error {
	return func(w io.Writer) error { return json.NewEncoder(w).Encode(v) }
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// keptBuild is the kept copy's path and what it was made from, ok when a
// safe copy is there.
func (r *run) keptBuild() (string, keptInfo, bool) {
	var info keptInfo
	path := filepath.Join(r.cfg.Home, keptBinaryName)
	if r.journal == nil || !readPrivate(filepath.Join(r.cfg.Home, keptInfoName), &info) || info.Version != 1 {
		return "", info, false
	}
	f, fi, err := safefile.Open(path, private)
	if err != nil {
		return "", info, false
	}
	f.Close()
	if fi.Size() != info.Size {
		return "", info, false
	}
	return path, info, true
}

// onDiskIsKept reports whether the binary at --ctrld is the build kept:
// the same size and modification time as the file the copy was made from.
func (r *run) onDiskIsKept(info keptInfo) bool {
	fi, err := os.Stat(r.cfg.Ctrld)
	return err == nil && fi.Size() == info.Size && fi.ModTime().UnixNano() == info.ModNS
}

// keepBuild keeps a copy of the binary at --ctrld, which has just
// verified, unless the copy kept is that build already.
func (r *run) keepBuild() {
	if r.journal == nil {
		return
	}
	if _, info, ok := r.keptBuild(); ok && r.onDiskIsKept(info) {
		return
	}
	src, err := os.Open(r.cfg.Ctrld)
	if err != nil {
		return
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	info := keptInfo{Version: 1, Size: fi.Size(), ModNS: fi.ModTime().UnixNano()}
	if r.version != nil {
		info.Ctrld = parse.DisplayVersion(r.version)
	}
	h := sha256.New()
	err = writePrivate(r.cfg.Home, keptBinaryName, func(w io.Writer) error {
		_, err := io.Copy(io.MultiWriter(w, h), src)
		return err
	}, 0o700)
	if err != nil {
		return
	}
	info.SHA256 = hex.EncodeToString(h.Sum(nil))
	_ = writePrivate(r.cfg.Home, keptInfoName, writeJSON(info), 0o600)
}

// restoreBinary puts the kept build back at --ctrld (the file a link
// there names): copied beside it, then renamed over it, so the binary is
// never a partial copy.
func (r *run) restoreBinary() error {
	kept, _, ok := r.keptBuild()
	if !ok {
		return errors.New("no kept build")
	}
	target, err := filepath.EvalSymlinks(r.cfg.Ctrld)
	if err != nil {
		target = r.cfg.Ctrld
	}
	src, _, err := safefile.Open(kept, private)
	if err != nil {
		return err
	}
	defer src.Close()
	rnd := make([]byte, 8)
	if _, err := rand.Read(rnd); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(target), ".ctrld-install-restore-"+hex.EncodeToString(rnd))
	dst, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if err == nil {
		err = dst.Chmod(0o755)
	}
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, target)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// refused reads what was rolled back here before.
func (r *run) refused() (refusedFile, bool) {
	var f refusedFile
	if r.journal == nil || !readPrivate(filepath.Join(r.cfg.Home, refusedName), &f) || f.Version != 1 {
		return f, false
	}
	if _, ok := codes.Lookup(f.Code); !ok {
		return f, false
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
		if h, err := fileSHA256(r.cfg.Ctrld); err == nil && h == ref.Build {
			o.RefusedBuild = true
		}
	}
	if secret.Given() && ref.Request.matches(secret, r.cfg.Extra) {
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
		if h, err := fileSHA256(r.cfg.Ctrld); err == nil && h == ref.Build {
			ref.Build, changed = "", true
		}
	}
	if secret != nil && secret.Given() && ref.Request.matches(*secret, r.cfg.Extra) {
		ref.Request, changed = nil, true
	}
	switch {
	case ref.Build == "" && ref.Request == nil:
		_ = os.Remove(filepath.Join(r.cfg.Home, refusedName))
	case changed:
		_ = writePrivate(r.cfg.Home, refusedName, writeJSON(ref), 0o600)
	}
}

// snapshot is what the run kept of a healthy device before acting on it.
type snapshot struct {
	resolver string   // the resolver the service was provisioned with
	extra    []string // and the admin's flags
	version  string   // the version that ran, for the rolled-back line
}

// takeSnapshot keeps what the device runs before a transaction: the
// provisioning from the service definition, and the build the daemon runs
// (kept already, or kept now when it is the file on disk).
func (r *run) takeSnapshot(o plan.Observation) snapshot {
	r.journal.phase(record.PhaseSnapshot)
	var s snapshot
	if def, ok := r.deps.Definition(r.cfg.ServiceFile); ok {
		s.resolver, s.extra, _ = def.Provisioning()
	}
	if o.Binary != parse.SameNo {
		// The daemon runs the file on disk, and it is healthy: it is a
		// build that verified.
		r.keepBuild()
		if r.version != nil {
			s.version = parse.DisplayVersion(r.version)
		}
	} else if v := recordedVersion(r.prev); v != nil {
		s.version = parse.DisplayVersion(v)
	}
	return s
}

// rollBack brings back, once, a device that was healthy before an action
// that did not verify. It is not tried when the device is healthy again
// anyway (ctrld stopped nothing), or when nothing was kept to do it with.
// cause is the action's code, which the run still ends with.
func (r *run) rollBack(p plan.Plan, snap snapshot, cause codes.Code, secret Secret) {
	if r.interrupted() || r.rolledBack != "" {
		return
	}
	if now := r.postConditions(); now.Healthy() {
		return
	}
	_, info, kept := r.keptBuild()
	binaryChanged := kept && !r.onDiskIsKept(info)
	undo, ok := plan.Rollback(p.Action, true, plan.Kept{Binary: binaryChanged, Provisioning: snap.resolver != ""})
	if !ok {
		return
	}
	r.journal.phase(record.PhaseRollingBack)
	r.remember(p, cause, secret, binaryChanged)
	version := snap.version
	if undo.RestoreBinary {
		if err := r.restoreBinary(); err != nil {
			r.rollbackFailed()
			return
		}
		version = info.Ctrld
	}
	// The rollback needs its own attempt: the action's evidence stays the
	// run's.
	var args []string
	switch {
	case undo.Restart:
		args = r.form(parse.FeatureRestart)
	case undo.Start:
		args = append([]string{"start", FlagResolver, snap.resolver}, snap.extra...)
	}
	r.attempts++
	c := r.command(args...)
	r.waiting(&c, args[0])
	res, err := r.deps.Run(r.budget, c)
	if err != nil || res.TimedOut || res.Canceled {
		r.rollbackFailed()
		return
	}
	if !r.settled().Healthy() {
		r.rollbackFailed()
		return
	}
	r.action, r.rolledBack = outcome.ActionRolledBack, outcome.RollbackOK
	// The record names the version that runs: the next run must not take
	// the refused build for the running one.
	if v, err := parse.ParseVersion(version); err == nil {
		r.version = v
	}
	r.out.Infof("%s", outcome.RolledBackLine(version))
}

func (r *run) rollbackFailed() {
	r.action, r.rolledBack = outcome.ActionRolledBack, outcome.RollbackFailed
	r.out.Infof("%s", outcome.LineRollbackFailed)
}

// remember keeps what was refused: the build on disk when it is not the
// one kept, the request when the action provisioned.
func (r *run) remember(p plan.Plan, cause codes.Code, secret Secret, binaryChanged bool) {
	ref := refusedFile{Version: 1, Code: cause.Name}
	if old, ok := r.refused(); ok {
		ref.Build, ref.Request = old.Build, old.Request
	}
	if binaryChanged {
		if h, err := fileSHA256(r.cfg.Ctrld); err == nil {
			ref.Build = h
		}
	}
	if p.Action == plan.Provision && secret.Given() {
		if h, err := newRequestHash(secret, r.cfg.Extra); err == nil {
			ref.Request = h
		}
	}
	_ = writePrivate(r.cfg.Home, refusedName, writeJSON(ref), 0o600)
}

// listener is the address of ctrld's first listener: --listen in the
// service's arguments, else the ctrld.toml its --config names or the one
// in the home. ok is false when no config says: ctrld without a config it
// wrote serves nothing the run could name.
func (r *run) listener(ctx context.Context) (string, bool) {
	def, defOK := r.deps.Definition(r.cfg.ServiceFile)
	if defOK {
		if a := def.Listen(); a != "" {
			return a, true
		}
	}
	path := filepath.Join(r.cfg.Home, "ctrld.toml")
	if defOK && def.Config() != "" {
		path = def.Config()
	}
	var b []byte
	err := safefile.OpenContext(ctx, path, safefile.Rules{Follow: true, Owner: safefile.AnyOwner}, func(f *os.File, _ fs.FileInfo) error {
		var err error
		b, err = io.ReadAll(io.LimitReader(f, parse.MaxConfigSize+1))
		return err
	})
	if err != nil {
		return "", false
	}
	// ListenerDefault comes with ctrld's default address.
	a, state := parse.ListenerAddr(b)
	return a, state != parse.ListenerUnknown
}

// answers asks the listener one DNS question within dnsWait.
func (r *run) answers(addr string) bool {
	ctx, cancel := context.WithTimeout(r.budget, dnsWait)
	defer cancel()
	return dnscheck.Ask(ctx, addr) != dnscheck.NoAnswer
}

// settled is the post-conditions once the device has settled: asked again,
// at growing intervals, for up to Config.Settle (a quarter of --timeout
// when that is shorter), until they hold. A service definition that is
// gone does not come back by itself.
func (r *run) settled() decide.PostConditions {
	// A quarter of the budget at most: what is left must still hold a
	// rollback and the run's end.
	window := min(r.cfg.Settle, r.cfg.Timeout/4)
	deadline := r.deps.Now().Add(window)
	wait := settlePoll
	for {
		p := r.postConditions()
		if p.Healthy() && r.runsOtherBuild() {
			p.OtherBuild = true
		}
		if p.Healthy() || !p.Checked || !p.ServiceFile || p.TimedOut || r.budget.Err() != nil {
			return p
		}
		// The last question is asked at the window's end, not skipped
		// for want of a whole interval.
		left := deadline.Sub(r.deps.Now())
		if left <= 0 {
			return p
		}
		if r.deps.Sleep(r.budget, min(wait, left)) != nil {
			return p
		}
		wait = min(2*wait, settlePollMax)
	}
}

// runsOtherBuild reports whether the running daemon is known not to have
// been started from the binary its service starts, after a command that
// should have started it: a restart that left the old daemon running has
// not applied the build on disk. A device that cannot tell is believed.
func (r *run) runsOtherBuild() bool {
	if r.deps.DaemonRunsBinary == nil {
		return false
	}
	binary := r.cfg.Ctrld
	def, ok := r.deps.Definition(r.cfg.ServiceFile)
	if ok {
		binary = def.Binary()
	}
	return r.deps.DaemonRunsBinary(r.budget, def.PIDFile, binary) == parse.SameNo
}

// startsTransaction reports whether an action over a healthy device may
// start: with an attempt's time and a rollback's left. One that may not
// ends the run as the time limit, having changed nothing.
func (r *run) startsTransaction() bool {
	return r.timeLeft() >= r.minAttempt()+r.rollbackTime()
}

// refusedEvidence ends a run whose plan refused: the code the rollback
// ended with, nothing run.
func (r *run) refusedEvidence(p plan.Plan) decide.Evidence {
	if p.RestoreBinary {
		// Only when the daemon does not run the file already: a rename
		// of the same build would change nothing.
		if _, info, ok := r.keptBuild(); ok && !r.onDiskIsKept(info) {
			_ = r.restoreBinary()
		}
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
