package cli

import (
	"slices"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/decide"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/profile"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/support"
)

// runCodes prints the whole code registry.
func runCodes(args []string, io stdio) int {
	fs := newFlagSet("ctrld-install codes")
	format := fs.String("format", "text", "")
	p := report.New(io.Out, io.Err, nil, false)
	if code, done := parseFlags(fs, args, p, io, "codes"); done {
		return code
	}
	if !slices.Contains(support.CodesFormats, *format) {
		return failUsage(p, nil, usagef("--format must be text, json or markdown"))
	}
	if err := support.WriteCodes(io.Out, *format); err != nil {
		return failWrite(p)
	}
	return 0
}

// failWrite ends a command whose output could not be written. Its failure
// line goes to the same broken stdout, so the sentence on stderr is what
// is seen.
func failWrite(p *report.Printer) int {
	p.Errorf("the output cannot be written")
	return report.Emit(p, nil, decide.Installer(outcome.Install, codes.InstallerFailed), profile.Default, version)
}
