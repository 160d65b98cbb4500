// Package plan decides what an install does to a device, from what was
// observed of it and what the run asks for: nothing, a repair, an upgrade
// or a provisioning, and why, in fixed words. It is one pure function, so
// every combination is a row of a table test.
package plan

import (
	"strings"

	"github.com/Control-D-Inc/ctrld-install/internal/parse"
)

// Action is what the install does.
type Action int

const (
	Nothing   Action = iota // healthy and current: leave it alone
	Repair                  // registered but not running: bring the installed service back, no token needed
	Upgrade                 // healthy, but the binary on disk is not the one running: ctrld restart
	Provision               // ctrld start with the token or resolver
)

var actionWords = [...]string{"nothing to do", "repair", "upgrade", "provision"}

func (a Action) String() string { return actionWords[a] }

// Last is what the last recorded provisioning came to.
type Last int

const (
	LastNone   Last = iota // no record of one: never run here, or a record from before this was kept
	LastOK                 // it succeeded (or was found healthy since)
	LastFailed             // it failed: whatever runs now is not what was asked for
)

// Observation is the device as it is. Nothing in it is ever printed.
type Observation struct {
	Registered bool // the service definition exists (or the service control manager knows ctrld)
	Running    bool // ctrld status says the daemon runs
	// Silent: it runs, but its listener does not answer. A restart is its
	// repair; nothing stronger, since the evidence is DNS alone.
	Silent bool
	// BinaryChanged: the daemon runs another binary than the one on disk
	// (SameNo), the same one (SameYes), or it cannot be told.
	Binary   parse.Same
	Resolver parse.Same // the resolver the service was provisioned with, against the one asked for
	Token    parse.Same // the token's keyed fingerprint, against the one asked for
	Flags    parse.Same // the extra flags the service runs with, against the ones asked for
	// Path: the service starts the ctrld binary this run was given
	// (--ctrld), or another file; a restart would start that other one.
	Path parse.Same
	Last Last
	// RefusedBuild: the binary on disk is a build that was rolled back on
	// this device before; RefusedRequest: this run asks for a resolver or
	// token and extra flags that were rolled back on it before.
	RefusedBuild, RefusedRequest bool
}

// Healthy is the device the contract protects: registered, running and
// answering.
func (o Observation) Healthy() bool { return o.Registered && o.Running && !o.Silent }

// Request is what the run asks for.
type Request struct {
	Secret bool // a token or a resolver was given
	Force  bool
}

// Plan is the decision and its reason, fixed text.
type Plan struct {
	Action Action
	Reason string
	// NeedsSecret: the plan provisions, so a token or resolver is needed.
	NeedsSecret bool
	// Refused: the plan does nothing because what would have been done
	// was rolled back on this device before; the run ends with the code
	// that rollback ended with. RestoreBinary: a package put the refused
	// build on disk again, and the kept one goes back in its place.
	Refused, RestoreBinary bool
	// Transaction: the action stops or replaces a healthy service, so what
	// runs is kept first, and brought back if the action does not verify.
	Transaction bool
	// Fallback: a repair that does not hold may provision instead. Not
	// for a daemon that runs and only its listener did not answer: ctrld
	// start removes the service first, and DNS alone is no proof that a
	// provisioning would do better.
	Fallback bool
	// BuildFirst: a healthy device gets a new build and a new request at
	// once. The build is applied first, as an upgrade under the
	// provisioning that runs, each step verified on its own, so that a
	// failure refuses only its own part.
	BuildFirst bool
}

// The reasons, fixed words, spelled once: install prints them after
// "plan: ", and explain reads them from here.
const (
	ReasonForce            = "--force was given"
	ReasonNothingInstalled = "nothing is installed"
	ReasonChanged          = "configuration changed: " // then what changed
	ReasonLastFailed       = "the last provisioning failed"
	ReasonRepairNoSecret   = "the service is registered but not running, and no token or resolver was given to provision it again"
	ReasonNotRunning       = "the service is registered but not running"
	ReasonSilent           = "the service runs but its listener does not answer"
	ReasonUpgrade          = "the ctrld binary on disk is not the one the running daemon was started from"
	ReasonCurrent          = "ctrld is running the binary on disk with the configuration asked for"
	ReasonRefusedBuild     = "this ctrld build was rolled back here before"
	ReasonRefusedRequest   = "this configuration was rolled back here before"
)

// The plan lines of a transaction and of a paused request, printed by
// install as it meets them.
const (
	ReasonNoRollback        = "this change cannot be rolled back: " // then why
	ReasonCutShortHealthy   = "the last run was cut short while it changed ctrld, and the device is healthy with the change"
	ReasonCutShortUnhealthy = "the last run was cut short while it changed ctrld, and the device is not healthy; bringing back what ran before"
	ReasonBuildFirst        = "the new ctrld build first, under the configuration that runs; then the configuration"
	ReasonPaused            = "the same request was refused for good at its last try" // then (CODE); when it is sent again
)

// Decide plans the least destructive action that makes the device what
// the request asks for. ctrld start removes a running service before it
// installs the new one, so a healthy device is provisioned again only for
// a reason: --force, a change, or a last provisioning that failed (ctrld
// 1.2 runs a default configuration after the API refused the device).
// A registered service that does not run is repaired without the token;
// when the run has no token or resolver, a provisioning it would need is
// a repair if one can help.
func Decide(o Observation, r Request) Plan {
	p := decide(o, r)
	p.Transaction = p.Action != Nothing && o.Healthy()
	p.Fallback = p.Action == Repair && r.Secret && !o.Silent
	if p.Action == Provision && o.Healthy() && o.RefusedBuild && !r.Force {
		// The kept build goes back first: the change is of configuration.
		p.RestoreBinary = true
	}
	// Only for the binary the service starts: a service that starts
	// another file gets the given one by provisioning alone.
	p.BuildFirst = p.Transaction && p.Action == Provision && o.Binary == parse.SameNo && o.Path != parse.SameNo && !p.RestoreBinary && !r.Force
	return p
}

func decide(o Observation, r Request) Plan {
	provision := func(reason string) Plan {
		if !r.Secret && o.Registered && !o.Running {
			return Plan{Action: Repair, Reason: ReasonRepairNoSecret}
		}
		return Plan{Action: Provision, Reason: reason, NeedsSecret: true}
	}
	switch {
	case r.Force:
		return provision(ReasonForce)
	case !o.Registered:
		return provision(ReasonNothingInstalled)
	}
	// What was rolled back here is not tried again on a healthy device:
	// the same package or policy comes back at every check-in. --force,
	// another build or another request try again.
	switch {
	case o.Healthy() && o.RefusedBuild && (!r.Secret || changes(o) == ""):
		return Plan{Action: Nothing, Reason: ReasonRefusedBuild, Refused: true, RestoreBinary: true}
	// A refused request matters only as a change: one the device already
	// runs (rolled back to after a forced provisioning failed) is just
	// what is asked for.
	case o.Healthy() && o.RefusedRequest && r.Secret && changes(o) != "":
		return Plan{Action: Nothing, Reason: ReasonRefusedRequest, Refused: true}
	}
	if changed := changes(o); changed != "" {
		return provision(ReasonChanged + changed)
	}
	switch {
	case o.Last == LastFailed:
		return provision(ReasonLastFailed)
	case !o.Running:
		return Plan{Action: Repair, Reason: ReasonNotRunning}
	case o.Silent:
		return Plan{Action: Repair, Reason: ReasonSilent}
	case o.Binary == parse.SameNo:
		return Plan{Action: Upgrade, Reason: ReasonUpgrade}
	}
	return Plan{Action: Nothing, Reason: ReasonCurrent}
}

// changes names what the request changes, in fixed words; "" for none.
func changes(o Observation) string {
	var what []string
	if o.Resolver == parse.SameNo {
		what = append(what, "resolver")
	}
	if o.Token == parse.SameNo {
		what = append(what, "token")
	}
	if o.Flags == parse.SameNo {
		what = append(what, "extra flags")
	}
	if o.Path == parse.SameNo {
		what = append(what, "ctrld binary")
	}
	return strings.Join(what, ", ")
}
