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

// planLines are internal/plan's reasons. plan spells only the refusals as
// constants, read here; the others are its literals, written again here
// with their meaning, and a test runs the planner over every observation
// and checks that each reason it gives is one of these.
var planLines = []planLine{
	{reason: "--force was given",
		means: "install was given --force, so it provisions ctrld again with ctrld start and the token or resolver, whatever it observed (ctrld start first removes the service that runs)."},
	{reason: "nothing is installed",
		means: "install observed no ctrld service definition on the device, so it provisions ctrld with ctrld start and the token or resolver."},
	{reason: "configuration changed: ", prefix: true, shown: "configuration changed: …",
		means: "install observed ctrld installed with another resolver, token, extra flags or ctrld binary than this run asks for (the words after the colon name which), so it provisions ctrld again with ctrld start and what this run asks for."},
	{reason: "the last provisioning failed",
		means: "install observed that the outcome record says the last provisioning failed, so it provisions again with ctrld start even where a service runs (after the API refused a device, older ctrld runs a default configuration)."},
	{reason: "the service is registered but not running, and no token or resolver was given to provision it again",
		means: "install observed the ctrld service registered but not running, and the run has no token or resolver, so it repairs: ctrld restart brings the installed service back without one. If the repair does not hold, the run ends with the check's code."},
	{reason: "the service is registered but not running",
		means: "install observed the ctrld service registered but not running, so it repairs: ctrld restart brings the installed service back, without the token. If the repair does not hold and the run has a token or resolver, it provisions again (\"the repair did not hold …; provisioning again\")."},
	{reason: "the service runs but its listener does not answer",
		means: "install observed ctrld running but its listener not answering a DNS question, so it repairs: ctrld restart brings the installed service back, without the token. Nothing stronger, since the evidence is DNS alone; if the repair does not hold, the run ends with the check's code."},
	{reason: "the ctrld binary on disk is not the one the running daemon was started from",
		means: "install observed ctrld healthy but running an older binary than the one now on disk (a package replaced it), so it upgrades: ctrld restart starts the service on the new binary, without the token."},
	{reason: "ctrld is running the binary on disk with the configuration asked for",
		means: "install --dry-run observed ctrld healthy, running the binary on disk with the configuration asked for, so a real install does nothing (its last line: already provisioned, nothing to do). Only --dry-run prints this plan."},
	{reason: plan.ReasonRefusedBuild, prefix: true,
		means: "install observed on disk a ctrld build that failed verification here before and was rolled back, so it does nothing to the healthy service but put the kept binary back on disk, and ends with the earlier failure's code. --force, another build or another request try again."},
	{reason: plan.ReasonRefusedRequest, prefix: true,
		means: "install was asked for a configuration that failed verification here before and was rolled back, so it does nothing: the healthy service stays as it is, and the run ends with the earlier failure's code. --force, another build or another request try again."},
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
