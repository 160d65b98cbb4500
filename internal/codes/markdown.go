package codes

import (
	"fmt"
	"io"
	"strings"
)

// WriteMarkdown writes the Support mapping: one row per code with its
// stage, exit status, class, scenario, next step and evidence. It is the
// body of docs/provisioning-failure-codes.md and of
// `ctrld-install codes --format markdown`.
func WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# Provisioning failure codes\n\n")
	b.WriteString("Generated from the code registry (`internal/codes`); do not edit by hand.\n")
	b.WriteString("Regenerate with `go test ./internal/codes -run TestMarkdownDoc -update`.\n\n")
	b.WriteString("Every failure ends with one line of this form on stdout, in `--log`, and in the outcome record:\n\n")
	b.WriteString("    ctrld-install: provisioning failed: stage=<stage> code=<CODE> (exit <N>)\n\n")
	b.WriteString("(`uninstall failed:` for `ctrld-install uninstall`, `verify failed:` for `ctrld-install verify`.)\n\n")
	fmt.Fprintf(&b, "Stages own exit ranges: %s;\n", ExitRanges())
	b.WriteString("the first number of each range is the stage's catch-all. 126 is ctrld's deactivation PIN, unchanged.\n")
	b.WriteString("Codes are append-only: never renumbered or renamed; a retired code stays, marked deprecated.\n\n")
	b.WriteString("| code | stage | exit | class | scenario | next step | evidence to ask for | since |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, c := range registry {
		stage := string(c.Stage)
		if stage == "" {
			stage = "-"
		}
		name := "`" + c.Name + "`"
		if c.Deprecated {
			name += " (deprecated)"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s |\n",
			name, stage, c.Exit, c.Class, cell(c.Scenario), cell(nextSteps(c)), cell(c.Evidence), c.Since)
	}
	b.WriteString("\nClasses: `ok` success; `fatal` the same run will fail the same way; `retryable` a later\n")
	b.WriteString("attempt may succeed unchanged (ctrld-install retries these itself with `--retries`);\n")
	b.WriteString("`already-managed` ctrld is installed and protected, leave it alone.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func cell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// nextSteps is the next step, and uninstall's own where it has one.
func nextSteps(c Code) string {
	if c.UninstallNextStep == "" {
		return c.NextStep
	}
	return c.NextStep + " After an uninstall: " + c.UninstallNextStep
}
