package install

import (
	"github.com/Control-D-Inc/ctrld-install/internal/decide"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/plan"
	"github.com/Control-D-Inc/ctrld-install/internal/platform"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/store"
)

// observe reads the device as it is, record or not: the service
// registration; whether the daemon runs (ctrld status, in the installed
// release's form); whether it runs the binary now on disk; what the service
// was provisioned with against what this run asks for; and the last
// recorded provisioning. post is what the checks found, the evidence of a
// skip. Nothing observed is printed.
func (r *run) observe(secret Secret) (plan.Observation, decide.PostConditions) {
	post := r.postConditions()
	o := plan.Observation{Registered: post.ServiceFile, Running: post.StatusRunning, Last: lastProvisioning(r.prev)}
	// A daemon that runs and answers nobody protects nobody, but only a
	// restart is its repair: the evidence is DNS alone.
	o.Silent = post.StatusRunning && post.Listener && !post.Answers
	if !o.Registered {
		return o, post
	}
	def, ok := r.deps.Definition(r.cfg.ServiceFile)
	// Only a run that could provision compares what it asks for: one with
	// no token keeps whatever is installed running. The token is compared
	// with what ctrld-install kept, whatever the definition says.
	if secret.Given() && secret.IsToken() {
		o.Token = r.tokenPrint.result()
	}
	// The daemon is compared with the binary its service starts, spelled
	// as the service spells it: with another --ctrld, a restart would start
	// the old file again, and Windows names a process's image by that path.
	// Whether it is another binary is a question of files, not spellings:
	// ctrld writes the path with links resolved.
	binary := r.cfg.Ctrld
	if ok {
		binary = def.Binary()
		if secret.Given() && !platform.SameBinary(def.Binary(), r.cfg.Ctrld) {
			o.Path = parse.SameNo
		}
	}
	if ok && secret.Given() {
		if !secret.IsToken() {
			o.Resolver = def.Resolver(secret.value)
		}
		o.Flags = def.Flags(r.cfg.Extra, secret.IsToken())
	}
	if o.Running {
		o.Binary = r.deps.DaemonRunsBinary(r.budget, def.PIDFile, binary)
		// Where the device cannot tell (a launchd or a cgroup that does not
		// answer), a version on disk other than the one the last run saw
		// still says a package replaced the binary.
		if was := recordedVersion(r.prev); o.Binary == parse.SameUnknown && was != nil && r.version != nil && !was.Equal(r.version) {
			o.Binary = parse.SameNo
		}
	}
	return o, post
}

// lastProvisioning reads what the last provisioning came to from the
// record: its own word, or for a record written before it kept one, the
// outcome of the install that wrote it. A run killed while ctrld ran left
// a device nobody checked: that counts as failed.
func lastProvisioning(rec *record.Record) plan.Last {
	switch lastProvisioningWord(rec) {
	case record.ProvisioningOK:
		return plan.LastOK
	case record.ProvisioningFailed:
		return plan.LastFailed
	}
	return plan.LastNone
}

func lastProvisioningWord(rec *record.Record) string {
	switch {
	case rec == nil:
		return ""
	case rec.Result == record.ResultRunning && rec.Phase != record.PhaseStarted && rec.Phase != record.PhaseSnapshot && !txPhase(rec.Phase) && rec.Command != record.CommandUninstall:
		return record.ProvisioningFailed
	case rec.Provisioning != "" || rec.Command != "":
		return rec.Provisioning
	}
	// A record from before: only an install that ran ctrld start says
	// anything.
	o, ok := rec.Summary.Outcome()
	switch {
	case !ok || o.Command == outcome.Uninstall:
		return ""
	case o.Code.IsOK():
		return record.ProvisioningOK
	case o.Action == outcome.ActionProvisioned && o.Source != outcome.SourceInstaller:
		return record.ProvisioningFailed
	}
	return ""
}

// tokenPrint is the comparison of a run's token with the kept
// fingerprint, made once when the token is read.
type tokenPrint struct{ same parse.Same }

func startTokenPrint(home, token string) *tokenPrint {
	return &tokenPrint{same: store.TokenSame(home, token)}
}

// result is the comparison. A nil *tokenPrint (no token) compares nothing.
func (t *tokenPrint) result() parse.Same {
	if t == nil {
		return parse.SameUnknown
	}
	return t.same
}
