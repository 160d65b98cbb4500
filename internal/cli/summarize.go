package cli

import (
	"fmt"
	"os"
	"slices"

	"github.com/spf13/pflag"

	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/support"
)

func summarizeFlagSet(format *string, latest *bool) *pflag.FlagSet {
	fs := newFlagSet("ctrld-install summarize")
	fs.StringVar(format, "format", "text", "")
	fs.BoolVar(latest, "latest", false, "")
	return fs
}

// runSummarize counts the outcomes in logs and outcome records, read from
// the named files and directories or from standard input. Like status it
// reports and does not judge: it exits 0 whenever it printed a summary.
func runSummarize(args []string, io stdio) int {
	var format string
	var latest bool
	fs := summarizeFlagSet(&format, &latest)
	p := report.New(io.Out, io.Err, nil, false)
	if code, done := parseFlags(fs, args, p, io, ""); done {
		return code
	}
	if !slices.Contains(support.SummaryFormats, format) {
		return failUsage(p, nil, usagef("--format must be text, json, csv or markdown"))
	}
	paths := fs.Args()
	// Every name is checked before anything is read, so a typo fails
	// before a partial summary is printed. Names are not repeated: a log
	// file name is as untrusted as its content.
	for i, path := range paths {
		if path == "-" {
			continue
		}
		if _, err := os.Stat(path); err != nil {
			return failUsage(p, nil, usagef("input %d of %d cannot be found", i+1, len(paths)))
		}
	}
	c := support.NewCounter()
	if latest {
		c = support.NewLatestCounter()
	}
	if len(paths) == 0 {
		paths = []string{"-"}
	}
	for _, path := range paths {
		if path == "-" {
			c.Read(io.In)
			continue
		}
		if err := c.ReadPath(path); err != nil {
			c.Unreadable()
		}
	}
	s := c.Summary()
	if err := support.WriteSummary(io.Out, s, format); err != nil {
		return failWrite(p)
	}
	if s.Unreadable > 0 {
		fmt.Fprintf(io.Err, "%swarning: %d file(s) could not be read to the end; the summary leaves out what they hold\n", report.Prefix, s.Unreadable)
	}
	return 0
}
