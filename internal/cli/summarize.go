package cli

import (
	"fmt"
	"os"
	"slices"

	"github.com/spf13/pflag"

	"github.com/Control-D-Inc/ctrld-install/internal/install"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/support"
)

// defineSummarize counts the outcomes in logs and outcome records, read
// from the named files and directories or from standard input. Like status
// it reports and does not judge: it exits 0 whenever it printed a summary.
func defineSummarize(_ *app, fs *pflag.FlagSet) action {
	format := fs.String("format", "text", "")
	latest := fs.Bool("latest", false, "")
	return func(a *app, c *call) int {
		if !slices.Contains(support.SummaryFormats, *format) {
			return a.failUsage(c, install.Usagef("--format must be text, json, csv or markdown"))
		}
		paths := c.fs.Args()
		// Every name is checked before anything is read, so a typo fails
		// before a partial summary is printed. Names are not repeated: a
		// log file name is as untrusted as its content.
		for i, path := range paths {
			if path == "-" {
				continue
			}
			if _, err := os.Stat(path); err != nil {
				return a.failUsage(c, install.Usagef("input %d of %d cannot be found", i+1, len(paths)))
			}
		}
		counter := support.NewCounter()
		if *latest {
			counter = support.NewLatestCounter()
		}
		if len(paths) == 0 {
			paths = []string{"-"}
		}
		for _, path := range paths {
			if path == "-" {
				counter.Read(a.io.In)
				continue
			}
			if err := counter.ReadPath(path); err != nil {
				counter.Unreadable()
			}
		}
		s := counter.Summary()
		if err := support.WriteSummary(a.io.Out, s, *format); err != nil {
			return a.failWrite(c)
		}
		if s.Unreadable > 0 {
			fmt.Fprintf(a.io.Err, "%swarning: %d file(s) could not be read to the end; the summary leaves out what they hold\n", report.Prefix, s.Unreadable)
		}
		return 0
	}
}
