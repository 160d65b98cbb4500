package explain

import (
	"strings"

	"github.com/Control-D-Inc/ctrld-install/internal/plan"
)

// planTail ends every plan line's meaning: where the line is printed and
// where the outcome is.
const planTail = " Every install that acts prints its plan line first, before it changes anything; install --dry-run prints it too, then ends \"dry run: would …\" and changes nothing. The outcome is the run's last line."

// planLine is one reason internal/plan gives, as install prints it after
// "plan: ": what the device was observed as and what the run does next.
type planLine struct {
	reason string
	prefix bool // the reason is followed by words of its own (what changed)
	shown  string
	means  string
}

// planLines are internal/plan's reasons, read from its constants, each with
// its meaning; a test runs the planner over every observation and checks
// that each reason it gives is one of these.
var planLines = []planLine{
	{reason: plan.ReasonForce,
		means: "install was given --force, so it provisions ctrld again with ctrld start and the token or resolver, whatever it observed (ctrld start first removes the service that runs)."},
	{reason: plan.ReasonNothingInstalled,
		means: "install observed no ctrld service definition on the device, so it provisions ctrld with ctrld start and the token or resolver."},
	{reason: plan.ReasonChanged, prefix: true, shown: plan.ReasonChanged + "…",
		means: "install observed ctrld installed with another resolver, token, extra flags or ctrld binary than this run asks for (the words after the colon name which), so it provisions ctrld again with ctrld start and what this run asks for."},
	{reason: plan.ReasonLastFailed,
		means: "install observed that the outcome record says the last provisioning failed, so it provisions again with ctrld start even where a service runs (after the API refused a device, older ctrld runs a default configuration)."},
	{reason: plan.ReasonRepairNoSecret,
		means: "install observed the ctrld service registered but not running, and the run has no token or resolver, so it repairs: ctrld restart brings the installed service back without one. If the repair does not hold, the run ends with the check's code."},
	{reason: plan.ReasonNotRunning,
		means: "install observed the ctrld service registered but not running, so it repairs: ctrld restart brings the installed service back, without the token. If the repair does not hold and the run has a token or resolver, it provisions again (\"the repair did not hold …; provisioning again\")."},
	{reason: plan.ReasonSilent,
		means: "install observed ctrld running but its listener not answering a DNS question, so it repairs: ctrld restart brings the installed service back, without the token. Nothing stronger, since the evidence is DNS alone; if the repair does not hold, the run ends with the check's code."},
	{reason: plan.ReasonUpgrade,
		means: "install observed ctrld healthy but running an older binary than the one now on disk (a package replaced it), so it upgrades: ctrld restart starts the service on the new binary, without the token."},
	{reason: plan.ReasonCurrent,
		means: "install --dry-run observed ctrld healthy, running the binary on disk with the configuration asked for, so a real install does nothing (its last line: already provisioned, nothing to do). Only --dry-run prints this plan."},
	{reason: plan.ReasonRefusedBuild, prefix: true,
		means: "install observed on disk a ctrld build that failed verification here before and was rolled back, so it does nothing to the healthy service but put the kept binary back on disk, and ends with the earlier failure's code. --force, another build or another request try again."},
	{reason: plan.ReasonRefusedRequest, prefix: true,
		means: "install was asked for a configuration that failed verification here before and was rolled back, so it does nothing: the healthy service stays as it is, and the run ends with the earlier failure's code. --force, another build or another request try again."},
	{reason: plan.ReasonNoRollback, prefix: true, shown: plan.ReasonNoRollback + "…",
		means: "install is about to change a healthy device but could keep nothing to bring it back with (the words after the colon say why: no copy of the running build, no resolver in the service definition, no room in the home), so it goes ahead without a rollback; the record says \"rollback\": \"none\"."},
	{reason: plan.ReasonCutShortHealthy,
		means: "an earlier run was stopped (killed, a signal, the device restarted) while it changed ctrld, and this run found the device healthy with the change, so it keeps it and goes on as for any healthy device."},
	{reason: plan.ReasonCutShortUnhealthy,
		means: "an earlier run was stopped (killed, a signal, the device restarted) while it changed ctrld, and this run found the device not healthy, so before anything else it brings back what ran before the change (the kept build and configuration), once; the run ends with the code of what it found, after a rolled-back line."},
	{reason: plan.ReasonBuildFirst,
		means: "install found both a new ctrld build on disk and a new configuration asked for on a healthy device, so it applies them as two changes: the build first (ctrld restart), then the configuration (ctrld start), each verified on its own, so that a failure is rolled back and refused for its own part only."},
	{reason: plan.ReasonPaused, prefix: true, shown: plan.ReasonPaused + " (…); it is sent again from …",
		means: "the same token or resolver, flags and ctrld build were refused for good by the API or the device at the last try (the code in brackets), so this run sends nothing and ends with that code; the request is sent again from the time named (15 minutes after the first refusal, doubling to a day), or at once with --force, another token or resolver, or another ctrld binary."},
}

// planLineKinds are planLines as explain shows them.
var planLineKinds = func() []LineKind {
	out := make([]LineKind, len(planLines))
	for i, p := range planLines {
		shown := p.shown
		if shown == "" {
			shown = p.reason
		}
		out[i] = LineKind{Shown: "plan: " + shown, Meaning: strings.ToUpper(p.means[:1]) + p.means[1:] + planTail, match: planMatch(p)}
	}
	return out
}()

// planMatch matches the plan line of p: the whole reason, or its words
// followed by more for a reason that names what changed. A longer reason
// that starts with another is its own line, so the match is exact.
func planMatch(p planLine) func(string) bool {
	return func(rest string) bool {
		r, ok := strings.CutPrefix(rest, "plan: ")
		if !ok {
			return false
		}
		r = strings.TrimRight(r, " \t\r\n")
		if p.prefix {
			return strings.HasPrefix(r, strings.TrimRight(p.reason, " "))
		}
		return r == p.reason
	}
}
