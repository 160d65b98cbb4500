package explain

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/profile"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
)

// Formats of `ctrld-install codes`.
var CodesFormats = []string{"text", "json", "markdown"}

// WriteCodes prints the whole registry in format, one of CodesFormats.
// markdown is exactly docs/provisioning-failure-codes.md.
func WriteCodes(w io.Writer, format string) error {
	switch format {
	case "text":
		var b strings.Builder
		for i, c := range codes.All() {
			if i > 0 {
				b.WriteString("\n")
			}
			writeCodeBlock(&b, c)
		}
		_, err := io.WriteString(w, b.String())
		return err
	case "json":
		list := []codeJSON{}
		for _, c := range codes.All() {
			list = append(list, newCodeJSON(c))
		}
		return writeJSON(w, struct {
			Codes []codeJSON `json:"codes"`
		}{list})
	case "markdown":
		return codes.WriteMarkdown(w)
	}
	return fmt.Errorf("explain: unknown codes format %q", format)
}

// codeJSON names its fields as the outcome record does, so one jq filter
// reads both.
type codeJSON struct {
	Code     string `json:"code"`
	Stage    string `json:"stage"`
	ExitCode int    `json:"exit_code"`
	Class    string `json:"class"`
	Scenario string `json:"scenario"`
	NextStep string `json:"next_step"`
	// UninstallNextStep is uninstall's own next step, where it has one.
	UninstallNextStep string `json:"uninstall_next_step,omitempty"`
	Evidence          string `json:"evidence"`
	Since             string `json:"since"`
	Deprecated        bool   `json:"deprecated"`
}

func newCodeJSON(c codes.Code) codeJSON {
	return codeJSON{
		Code: c.Name, Stage: string(c.Stage), ExitCode: c.Exit, Class: string(c.Class),
		Scenario: c.Scenario, NextStep: c.NextStep, UninstallNextStep: c.UninstallNextStep, Evidence: c.Evidence,
		Since: c.Since, Deprecated: c.Deprecated,
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ClassMeaning is the one-line meaning of a class for people.
func ClassMeaning(c codes.Class) string {
	switch c {
	case codes.ClassOK:
		return "success"
	case codes.ClassFatal:
		return "the same run will fail the same way until something changes"
	case codes.ClassRetryable:
		return "a later attempt may succeed unchanged; ctrld-install retries these itself"
	case codes.ClassAlreadyManaged:
		return "ctrld is installed and protected; leave it alone"
	}
	return ""
}

// writeCodeBlock is one code as `codes` and `explain` print it: the name on
// its own line, then one indented field per line so each can be grepped.
//
// It deliberately does not print the failure line: a log scanner (or
// summarize) reading the output of explain would count it as a failure.
func writeCodeBlock(b *strings.Builder, c codes.Code) {
	stage := string(c.Stage)
	if stage == "" {
		stage = "-"
	}
	deprecated := "no"
	if c.Deprecated {
		deprecated = "yes: no longer reported, kept so old logs can still be explained"
	}
	b.WriteString(c.Name + "\n")
	field(b, "stage", stage)
	field(b, "exit", fmt.Sprint(c.Exit))
	field(b, "class", fmt.Sprintf("%s (%s)", c.Class, ClassMeaning(c.Class)))
	field(b, "scenario", c.Scenario)
	field(b, "next step", c.NextStep)
	if c.UninstallNextStep != "" {
		field(b, "uninstall", c.UninstallNextStep)
	}
	field(b, "evidence", c.Evidence)
	field(b, "since", c.Since)
	field(b, "deprecated", deprecated)
}

func field(b *strings.Builder, name, value string) {
	fmt.Fprintf(b, "  %-11s %s\n", name+":", value)
}

// WriteAnswer prints what explain found: what each of ctrld-install's
// lines pasted is, what an exit status means from a check, each code as
// `codes` prints it, each state, the exit profiles that report the number
// asked about, an Intune status and the uninstall PIN's advice.
//
// Lines are quoted without their "ctrld-install: " prefix and no failure
// line is printed whole, so a log scanner reading this output counts
// nothing in it.
func WriteAnswer(w io.Writer, a Answer) error {
	var b strings.Builder
	sep := func() {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
	}
	for _, l := range a.Lines {
		sep()
		fmt.Fprintf(&b, "the line %q (ctrld-install's)\n", l.Shown)
		field(&b, "meaning", l.Meaning)
	}
	for _, l := range a.Deb {
		sep()
		fmt.Fprintf(&b, "the line %q (%s)\n", l.Shown, l.Who)
		field(&b, "meaning", l.Meaning)
		field(&b, "next step", l.NextStep)
	}
	if a.Mac != nil {
		sep()
		if a.Mac.Scripts {
			b.WriteString("macOS Installer's \"An error occurred while running scripts from the package …\": not a ctrld-install code\n")
		} else {
			b.WriteString("macOS Installer's \"The install failed\" (\"The Installer encountered an error that caused the installation to fail\"): not a ctrld-install code\n")
		}
		field(&b, "here", a.Mac.Meaning)
		field(&b, "next step", a.Mac.NextStep)
	}
	if a.FromIME {
		sep()
		fmt.Fprintf(&b, "lpExitCode %d in the Intune Management Extension's log is the exit status of the Win32 app's command: install.ps1 and uninstall.ps1 exit with ctrld-install's status.\n", a.Exit)
	}
	if a.Check != nil {
		sep()
		fmt.Fprintf(&b, "exit %d from ctrld-install verify, or a detection script that runs it (Munki installcheck, Kandji audit, Intune detect.ps1), means %s: a state, not a failure\n", a.Check.Exit, a.Check.State.Word)
		field(&b, "meaning", a.Check.State.Meaning)
		field(&b, "next step", a.Check.State.NextStep)
		if len(a.Codes) > 0 {
			fmt.Fprintf(&b, "\nexit %d from ctrld-install install (its failure line names code=%s) is:\n", a.Check.Exit, a.Codes[0].Name)
		}
	}
	if a.MSI != nil {
		sep()
		st := a.MSI
		kind := "failure"
		if st.Success {
			kind = "success"
		}
		fmt.Fprintf(&b, "%d (0x%08X, or %d in Intune's reports) is msiexec's %s, a Windows Installer status reporting a %s, not a ctrld-install code\n", st.Status, st.HResult(), st.Decimal(), st.Name, kind)
		field(&b, "Microsoft", st.Message)
		field(&b, "here", st.Meaning)
		field(&b, "next step", st.NextStep)
		field(&b, "source", msiErrorCodes)
	}
	// A status the scripts report more often than the code registered
	// with it comes first.
	if a.Shell != nil && a.Shell.Likelier {
		sep()
		writeShellStatus(&b, *a.Shell, a.Codes)
	}
	for _, c := range a.Codes {
		if a.Check == nil || c.Name != a.Codes[0].Name {
			sep()
		}
		if a.PIN != nil && c.Name == codes.DeactivationPinRequired {
			writeUninstallPIN(&b, c, *a.PIN)
			continue
		}
		writeCodeBlock(&b, c)
	}
	for _, s := range a.Words {
		sep()
		fmt.Fprintf(&b, "%s (%s; a state, not a failure code)\n", states.Label(s.Word), s.Source)
		field(&b, "meaning", s.Meaning)
		field(&b, "next step", s.NextStep)
	}
	if len(a.Profiles) > 0 {
		sep()
		also := ""
		if len(a.Codes) > 0 {
			also = " also"
		}
		fmt.Fprintf(&b, "exit %d is%s what an exit profile reports in place of these codes:\n", a.Exit, also)
		for _, g := range groupProfiles(a.Profiles) {
			how := "--exit-profile " + string(g.uses[0].Profile)
			if g.uses[0].Truncated {
				how += fmt.Sprintf(" (%d, of which macOS and Linux keep %d)", g.uses[0].Status, a.Exit)
			}
			names := make([]string, len(g.uses))
			for i, u := range g.uses {
				names[i] = fmt.Sprintf("%s (exit %d)", u.Code.Name, u.Code.Exit)
				if u.Skipped {
					names[i] = u.Code.Name + " when already provisioned and nothing was done"
				}
			}
			fmt.Fprintf(&b, "  %s: %s\n", how, strings.Join(names, ", "))
		}
		b.WriteString("The code itself is on ctrld-install's last lines in the installer log, in its --log file, and in ctrld-install status.\n")
	}
	if a.Shell != nil && !a.Shell.Likelier {
		sep()
		writeShellStatus(&b, *a.Shell, a.Codes)
	}
	if a.FileWave != nil {
		sep()
		st := a.FileWave
		fmt.Fprintf(&b, "%d is a status FileWave reports for a fileset's script that did not end by itself, not ctrld-install's exit status\n", st.Status)
		field(&b, "FileWave", st.Message)
		field(&b, "here", st.Meaning)
		field(&b, "next step", st.NextStep)
		field(&b, "source", fileWaveScriptStatuses)
	}
	if a.Intune != nil {
		sep()
		st := a.Intune
		fmt.Fprintf(&b, "0x%08X (%d) is a status Intune reports about the Win32 app, not ctrld-install's exit status\n", st.Hex, st.Decimal())
		field(&b, "Microsoft", st.Message)
		field(&b, "here", st.Meaning)
		field(&b, "next step", st.NextStep)
		field(&b, "source", st.Source)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeUninstallPIN is DEACTIVATION_PIN_REQUIRED as an uninstall meets
// it: ctrld refused to be removed, which needs the PIN, not the install's
// advice to leave a protected device alone.
func writeUninstallPIN(b *strings.Builder, c codes.Code, p PINAdvice) {
	b.WriteString(c.Name + " (on uninstall)\n")
	field(b, "stage", string(c.Stage))
	field(b, "exit", fmt.Sprint(c.Exit))
	field(b, "class", fmt.Sprintf("%s (ctrld is protected by its deactivation PIN; only the PIN removes it)", c.Class))
	switch {
	case p.Missing:
		field(b, "scenario", "ctrld refused to be removed: it is protected by a deactivation PIN and no PIN was given (ctrld said the PIN is required).")
		field(b, "next step", uninstallMissingPIN)
	case p.Wrong:
		field(b, "scenario", "ctrld refused to be removed: it is protected by a deactivation PIN and the PIN given is not this device's (ctrld said the PIN is invalid).")
		field(b, "next step", uninstallWrongPIN)
	default:
		field(b, "scenario", "ctrld refused to be removed: it is protected by a deactivation PIN, and no PIN or a wrong one was given.")
		field(b, "next step", "If the uninstall ran without --pin-file or --pin-stdin, "+lowerFirst(uninstallMissingPIN)+" If it had one, "+lowerFirst(uninstallWrongPIN))
		field(b, "tell apart", "ctrld exits 126 for both, and ctrld-install prints none of ctrld's lines, so the uninstall policy tells: the PIN is missing when it passes none (no --pin-file or --pin-stdin, an empty parameter), wrong when it passes one. ctrld's own line, if you have it, says which: \"deactivation pin is required\" or \"deactivation pin is invalid\".")
	}
	field(b, "evidence", "Whether the uninstall policy passes a PIN (--pin-file, --pin-stdin) and where the device's deactivation PIN is kept in the Control D dashboard.")
}

const (
	uninstallMissingPIN = "Give the device's deactivation PIN to the uninstall (--pin-file PATH or --pin-stdin; Jamf: parameter 4 of uninstall.sh; Intune: a deactivation_pin file in the package), then run it again."
	uninstallWrongPIN   = "Check the deactivation PIN in the Control D dashboard and give that one; a wrong PIN changes nothing on the device, so run the uninstall again with the right one."
)

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// writeShellStatus explains that the shell may have reported the exit
// status instead of a code registered with it, and how to tell which. The
// code's name and the profiles' statuses come from the registry and the
// profiles, so a renumbered profile cannot leave this text wrong.
func writeShellStatus(b *strings.Builder, s ShellStatus, same []codes.Code) {
	switch {
	case len(same) == 0:
		fmt.Fprintf(b, "exit %d is not a ctrld-install code: it comes from %s\n", s.Exit, s.From)
	case s.Likelier:
		fmt.Fprintf(b, "exit %d most often comes from %s, not from ctrld-install:\n", s.Exit, s.From)
	default:
		fmt.Fprintf(b, "exit %d may also come from %s, not from ctrld-install:\n", s.Exit, s.From)
	}
	field(b, "meaning", s.Meaning)
	for _, c := range same {
		tell := s.TellApart
		if tell == "" {
			tell = fmt.Sprintf("when ctrld-install ran, the installer log has its own lines starting with %q, and a failure line with code=%s only when that is what happened; when the shell could not execute the binary, neither is there.",
				strings.TrimSpace(report.Prefix), c.Name)
		}
		field(b, "tell apart", tell)
		var other []string
		for _, p := range profile.Names {
			st := profile.ExitStatus(p, c, false)
			if st == s.Exit || reportsExit(p, s.Exit) {
				continue
			}
			other = append(other, fmt.Sprintf("--exit-profile %s reports %s as exit %d", p, c.Name, st))
		}
		if len(other) > 0 {
			whose := "the shell's"
			if s.From == fromScript {
				whose = "the script's"
			}
			field(b, "profiles", fmt.Sprintf("%s, so under those profiles a %d is always %s.", strings.Join(other, " and "), s.Exit, whose))
		}
	}
	field(b, "check", s.Check)
}

// reportsExit reports whether profile p turns any code into exit status n.
func reportsExit(p profile.Name, n int) bool {
	for _, c := range codes.All() {
		if profile.ExitStatus(p, c, false) == n || c.IsOK() && profile.ExitStatus(p, c, true) == n {
			return true
		}
	}
	return false
}

type profileGroup struct{ uses []ProfileUse }

// groupProfiles keeps profile order and puts one profile's codes on one line.
func groupProfiles(uses []ProfileUse) []profileGroup {
	var out []profileGroup
	for _, u := range uses {
		n := len(out)
		if n > 0 && out[n-1].uses[0].Profile == u.Profile && out[n-1].uses[0].Truncated == u.Truncated {
			out[n-1].uses = append(out[n-1].uses, u)
			continue
		}
		out = append(out, profileGroup{uses: []ProfileUse{u}})
	}
	return out
}
