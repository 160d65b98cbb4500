package main

import (
	"errors"
	"slices"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/support"
)

// runCodes prints the whole code registry.
func runCodes(args []string, io stdio) int {
	fs := newFlagSet("ctrld-install codes")
	format := fs.String("format", "text", "")
	p := report.New(io.out, io.err, nil, false)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflagErrHelp) {
			io.out.Write([]byte(usage))
			return 0
		}
		return failUsage(p, flagError(err))
	}
	if fs.NArg() > 0 {
		return failUsage(p, usagef("codes takes no arguments"))
	}
	if !slices.Contains(support.CodesFormats, *format) {
		return failUsage(p, usagef("--format must be text, json or markdown"))
	}
	if err := support.WriteCodes(io.out, *format); err != nil {
		return failWrite(p)
	}
	return 0
}

// failWrite is the exit of a command whose output could not be written;
// the failure line would go to the same broken stdout, so only the error
// sentence is printed.
func failWrite(p *report.Printer) int {
	p.Errorf("the output cannot be written")
	return codes.Must(codes.InstallerFailed).Exit
}
