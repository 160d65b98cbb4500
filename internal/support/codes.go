package support

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/profile"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
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
	return fmt.Errorf("support: unknown codes format %q", format)
}

// codeJSON names its fields as the outcome record does, so one jq filter
// reads both.
type codeJSON struct {
	Code       string `json:"code"`
	Stage      string `json:"stage"`
	ExitCode   int    `json:"exit_code"`
	Class      string `json:"class"`
	Scenario   string `json:"scenario"`
	NextStep   string `json:"next_step"`
	Evidence   string `json:"evidence"`
	Since      string `json:"since"`
	Deprecated bool   `json:"deprecated"`
}

func newCodeJSON(c codes.Code) codeJSON {
	return codeJSON{
		Code: c.Name, Stage: string(c.Stage), ExitCode: c.Exit, Class: string(c.Class),
		Scenario: c.Scenario, NextStep: c.NextStep, Evidence: c.Evidence,
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
	field(b, "evidence", c.Evidence)
	field(b, "since", c.Since)
	field(b, "deprecated", deprecated)
}

func field(b *strings.Builder, name, value string) {
	fmt.Fprintf(b, "  %-11s %s\n", name+":", value)
}

// WriteAnswer prints what explain found: each code as `codes` prints it,
// each status word, and the exit profiles that report the number asked about.
func WriteAnswer(w io.Writer, a Answer) error {
	var b strings.Builder
	sep := func() {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
	}
	for _, c := range a.Codes {
		sep()
		writeCodeBlock(&b, c)
	}
	for _, s := range a.Words {
		sep()
		b.WriteString(s.Word + " (a word ctrld-install status prints, not a failure code)\n")
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
	if a.Shell != nil {
		sep()
		writeShellStatus(&b, *a.Shell, a.Codes)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeShellStatus explains that the shell may have reported the exit
// status instead of a code registered with it, and how to tell which. The
// code's name and the profiles' statuses come from the registry and the
// profiles, so a renumbered profile cannot leave this text wrong.
func writeShellStatus(b *strings.Builder, s ShellStatus, same []codes.Code) {
	fmt.Fprintf(b, "exit %d may also come from the shell that ran ctrld-install, not from ctrld-install:\n", s.Exit)
	field(b, "meaning", s.Meaning)
	for _, c := range same {
		field(b, "tell apart", fmt.Sprintf("when ctrld-install ran, the installer log has its own lines starting with %q, and a failure line with code=%s only when that is what happened; when the shell could not execute the binary, neither is there.",
			strings.TrimSpace(report.Prefix), c.Name))
		var other []string
		for _, p := range profile.Names {
			st := profile.ExitStatus(p, c, false)
			if st == s.Exit || reportsExit(p, s.Exit) {
				continue
			}
			other = append(other, fmt.Sprintf("--exit-profile %s reports %s as exit %d", p, c.Name, st))
		}
		if len(other) > 0 {
			field(b, "profiles", fmt.Sprintf("%s, so under those profiles a %d is always the shell's.", strings.Join(other, " and "), s.Exit))
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
