package explain

import (
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
	"github.com/Control-D-Inc/ctrld-install/internal/status"
)

// LineKind is a line ctrld-install (or one of its MDM scripts) prints,
// as explain describes it. Shown is the line's fixed text, never the
// input: what varies in it is written "…".
type LineKind struct {
	Shown   string
	Meaning string
	Code    string // the code the line reports by itself, if any (OK for success)
	Word    string // the state it reports, if any
	hasWord bool
	// match reads the text after "ctrld-install: ".
	match func(rest string) bool
}

func startsWith(s string) func(string) bool {
	return func(rest string) bool { return strings.HasPrefix(rest, s) }
}

// lineKinds are the lines of every command, final lines first. Their
// texts come from the packages that print them where those export them.
var lineKinds = []LineKind{
	{Shown: outcome.LineProvisioned, Code: codes.OK, match: startsWith(outcome.LineProvisioned),
		Meaning: "The last line of an install that provisioned ctrld: ctrld start ran, the service is registered and ctrld status answers. An outcome; summarize counts it as OK."},
	{Shown: outcome.LineSkipped, Code: codes.OK, match: startsWith(outcome.LineSkipped),
		Meaning: "The last line of an install that found ctrld provisioned, running and current, and ran nothing (action skipped). An outcome; summarize counts it as OK."},
	{Shown: outcome.LineUpgraded, Code: codes.OK, match: startsWith(outcome.LineUpgraded),
		Meaning: "The last line of an install that found a healthy service running an older ctrld than the binary on disk, and applied the new one with ctrld restart (action upgraded). An outcome; summarize counts it as OK."},
	{Shown: outcome.LineRepaired, Code: codes.OK, match: startsWith(outcome.LineRepaired),
		Meaning: "The last line of an install that found the service registered but not running and brought it back without the token (action repaired). An outcome; summarize counts it as OK."},
	{Shown: outcome.LineUninstalled, Word: states.Uninstalled, hasWord: true, match: startsWith(outcome.LineUninstalled),
		Meaning: "The last line of an uninstall that ran ctrld uninstall and found the service gone. summarize counts it as the state UNINSTALLED, not as OK."},
	{Shown: outcome.LineNothingToRemove, Word: states.Uninstalled, hasWord: true, match: startsWith(outcome.LineNothingToRemove),
		Meaning: "The last line of an uninstall that found no ctrld service and removed nothing. summarize counts it as the state UNINSTALLED, not as OK."},
	{Shown: outcome.LineVerified, Code: codes.OK, match: startsWith(outcome.LineVerified),
		Meaning: "verify found ctrld provisioned and running now (and at least --min-version). A check, not an outcome: summarize does not count it."},
	{Shown: "not installed (exit 54)", Word: states.NotInstalled, hasWord: true, match: startsWith("not installed (exit 54)"),
		Meaning: "verify found no ctrld service definition: the device was never provisioned, or ctrld was removed. A state, not a failure; the detection scripts report it as \"install needed\"."},
	{Shown: codes.VerbUninstall + " failed: stage=… code=… (exit …)", match: startsWith(codes.VerbUninstall + " failed: "),
		Meaning: "The last line of an uninstall that failed: ctrld is still installed. The line names the code."},
	{Shown: codes.VerbVerify + " failed: stage=… code=… (exit …)", match: startsWith(codes.VerbVerify + " failed: "),
		Meaning: "verify found the device not healthy, with the code of what is wrong. A check, not an outcome: summarize does not count it."},
	{Shown: "attempt … failed: stage=… code=… (exit …); retrying in …", match: func(rest string) bool {
		return strings.HasPrefix(rest, "attempt ") && strings.Contains(rest, " failed: ")
	},
		Meaning: "A retry: this attempt ended with a retryable code and ctrld-install tries again within --timeout. Not the outcome; that is the run's last line."},
	{Shown: "running ctrld start (ctrld …, attempt … of …, time left …)", match: startsWith("running ctrld start ("),
		Meaning: "Progress: ctrld-install started ctrld start, with the ctrld version it found and the time left. The outcome is the run's last line."},
	{Shown: "running ctrld restart (ctrld …, time left …)", match: startsWith("running ctrld restart ("),
		Meaning: "Progress: ctrld-install restarts the registered service, without the token: an upgrade, so that it runs the new ctrld binary (the line then names the version it replaces, \"ctrld … replaces …\"), or a repair of a service that does not run or whose listener does not answer. The outcome is the run's last line."},
	{Shown: "running systemctl restart of ctrld's unit (ctrld …, time left …)", match: startsWith("running systemctl restart "),
		Meaning: "Progress: a repair on Linux with systemd restarts ctrld's unit through systemd, without the token (ctrld restart would wait out the unit's RestartSec first). The outcome is the run's last line."},
	{Shown: "running ctrld uninstall (ctrld …, time left …)", match: startsWith("running ctrld uninstall ("),
		Meaning: "Progress: ctrld-install started ctrld uninstall. The outcome is the run's last line."},
	{Shown: report.LineWaiting + "… (… of …)", match: startsWith(report.LineWaiting),
		Meaning: "Progress, printed every 30 seconds while a ctrld command runs, with the time spent and the budget (--timeout)."},
	{Shown: "next step: …", match: startsWith("next step: "),
		Meaning: "The next step of the code on the line after it, the run's failure line."},
	{Shown: report.LineError + "…", match: startsWith(report.LineError),
		Meaning: "An error sentence, on standard error and in --log. It names what was wrong (a flag, a file, the home directory) but never repeats a value; the failure line after it has the code, usually INSTALLER_USAGE."},
	{Shown: "warning: … file(s) could not be read to the end; …", match: startsWith("warning: "),
		Meaning: "summarize could not read some files to the end (permissions, a truncated gzip); the summary leaves out what they hold."},
	{Shown: "run started: ctrld-install …, command …, exit profile …, pid …", match: startsWith("run started: "),
		Meaning: "The first line of each run in the --log file: the ctrld-install version, the command, the exit profile and the process ID."},
	{Shown: status.LineLastRun + "…, … attempt(s), … ms", match: startsWith(status.LineLastRun),
		Meaning: "status: when the last recorded run ended, how many attempts it made and how long it took; the lines after it are that run's own last lines."},
	{Shown: status.LineNextTry + "…", match: startsWith(status.LineNextTry),
		Meaning: "status: the last run's request was refused for good (its code is on the lines around it), so installs before the time named change nothing and end with the same code; the request is sent again from then, or at once with --force, another token or resolver, or another ctrld build."},
	{Shown: states.LineNeverRun, Word: states.NeverRun, hasWord: true, match: startsWith(states.LineNeverRun),
		Meaning: "status found no outcome record (NEVER_RUN)."},
	{Shown: states.LineInvalidRecord, Word: states.InvalidRecord, hasWord: true, match: startsWith(states.LineInvalidRecord),
		Meaning: "status found an outcome record it cannot trust (INVALID_RECORD)."},
	{Shown: states.LineRunning + "…, pid …, since …", Word: states.Running, hasWord: true, match: startsWith(states.LineRunning),
		Meaning: "status found a run in progress: its phase, process ID and start (RUNNING)."},
	{Shown: "the run of … was interrupted during phase …", Code: codes.InstallerInterrupted, match: func(rest string) bool {
		return strings.HasPrefix(rest, "the run of ") && strings.Contains(rest, " was interrupted during phase ")
	},
		Meaning: "status found the journal of a run that was killed (SIGKILL, an MDM agent's time limit, a power cut) in the phase named; its outcome is INSTALLER_INTERRUPTED."},
	{Shown: "the repair did not hold (stage=… code=… (exit …)); provisioning again", match: startsWith("the repair did not hold ("),
		Meaning: "Progress: the repair (ctrld restart of the registered service) did not bring ctrld back, for the code in parentheses, and the run has a token or resolver, so it provisions again with ctrld start. The outcome is the run's last line."},
	{Shown: outcome.RolledBackLine("…"), match: startsWith(outcome.LineRolledBackPrefix),
		Meaning: "A change, --force or an upgrade over a healthy device failed its verification and took ctrld down; ctrld-install brought back, once, what ran before (the kept build, the provisioning the service held) and checked it: ctrld is running and answering DNS again, as before the run (action rolled-back, rollback ok). The failure's code is on the run's last line, and the same build or request is not tried again on this device unless --force is given or it changes."},
	{Shown: outcome.LineRollbackFailed, match: startsWith(outcome.LineRollbackFailed),
		Meaning: "A change, --force or an upgrade over a healthy device failed its verification, and bringing back what ran before failed too (action rolled-back, rollback failed): the device may have no DNS filtering now. The failure's code is on the run's last line; run the install again with the token or resolver the device had, and send Support the --log file and the record."},
	// The plan lines come last: their own kinds (planLineKinds) are
	// matched first.
	{Shown: "plan: …", match: startsWith("plan: "),
		Meaning: "The plan of an install: what it observed on the device and what it does next (provision, repair or upgrade), printed before it acts by every install that acts, and by install --dry-run, which then changes nothing. The outcome is the run's last line."},
	{Shown: "dry run: would … (exit 0)", match: startsWith("dry run: "),
		Meaning: "The last line of install --dry-run: what a real run would do. Nothing was changed, and it is not an outcome."},
}

// scriptLine is a line of one of the MDM scripts, which prefix their own
// lines "ctrld-install-<tool>: ".
var scriptLineRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`ctrld-install-[a-z]{2,12}: (not installed|error): `)
})

var scriptLineKinds = map[string]LineKind{
	"not installed": {Shown: "ctrld-install-<tool>: not installed: …", Word: states.NotInstalled, hasWord: true,
		Meaning: "An MDM detection script (Kandji audit, Munki installcheck) found no ctrld-install on the device and asks for the package to be installed (NOT_INSTALLED)."},
	"error": {Shown: "ctrld-install-<tool>: error: …", Code: codes.InstallerFailed,
		Meaning: "An MDM script stopped before ctrld-install ran (a setting it does not understand, ctrld-install missing, a file it cannot replace); it names the parameter or path, never a secret, and exits 60 or 61."},
}

// allLineKinds are the kinds linesIn matches, in order: each plan line's
// own before the plan line in general.
var allLineKinds = slices.Concat(planLineKinds, lineKinds)

// linesIn lists the kinds of ctrld-install lines in s, each once, in order
// of first appearance.
func linesIn(s string) []LineKind {
	var out []LineKind
	seen := map[string]bool{}
	add := func(k LineKind) {
		if !seen[k.Shown] {
			seen[k.Shown] = true
			out = append(out, k)
		}
	}
	for line := range strings.Lines(s) {
		// The .deb's scripts' lines are explained on their own (DebLine),
		// with the code their status names, not as a script that stopped.
		if m := scriptLineRE().FindStringSubmatch(line); m != nil && !debLineRE().MatchString(line) {
			add(scriptLineKinds[m[1]])
		}
		rest := line
		for {
			i := strings.Index(rest, report.Prefix)
			if i < 0 {
				break
			}
			rest = rest[i+len(report.Prefix):]
			for _, k := range allLineKinds {
				if k.match(rest) {
					add(k)
					break
				}
			}
		}
	}
	return out
}

// nextStepOf is the code whose next step is text, as a "next step:" line
// prints it.
func nextStepOf(text string) (codes.Code, bool) {
	text = strings.TrimRight(text, " \t\r\n")
	for _, c := range codes.All() {
		if c.NextStep == text {
			return c, true
		}
	}
	return codes.Code{}, false
}
