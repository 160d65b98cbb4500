package cli

import (
	"context"
	"errors"
	"fmt"

	"slices"

	"github.com/spf13/pflag"

	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/support"
)

type summarizeFlags struct {
	format          string
	latest, devices bool
}

func summarizeFlagSet(f *summarizeFlags) *pflag.FlagSet {
	fs := newFlagSet("ctrld-install summarize")
	fs.StringVar(&f.format, "format", "text", "")
	fs.BoolVar(&f.latest, "latest", false, "")
	fs.BoolVar(&f.devices, "devices", false, "")
	return fs
}

// runSummarize counts the outcomes in logs and outcome records, read from
// the named files and directories or from standard input. Like status it
// reports and does not judge: it exits 0 whenever it printed a summary.
func runSummarize(ctx context.Context, args []string, io stdio) int {
	var f summarizeFlags
	fs := summarizeFlagSet(&f)
	p := report.New(io.Out, io.Err, nil, false)
	if code, done := parseFlags(fs, args, p, io, ""); done {
		return code
	}
	if !slices.Contains(support.SummaryFormats, f.format) {
		return failUsage(p, nil, usagef("--format must be text, json, csv, markdown or html"))
	}
	paths := fs.Args()
	// Every name is checked before anything is read, so a typo fails
	// before a partial summary is printed. Names are not repeated: a log
	// file name is as untrusted as its content.
	for i, path := range paths {
		if path == "-" {
			continue
		}
		switch err := support.CheckPath(path); {
		case errors.Is(err, support.ErrNotFile):
			// A FIFO or a device could block or never end; a pipe is
			// read from standard input, where a signal can stop it.
			return failUsage(p, nil, usagef("input %d of %d is not a regular file or directory; pipe a stream to standard input with -", i+1, len(paths)))
		case err != nil:
			return failUsage(p, nil, usagef("input %d of %d cannot be found", i+1, len(paths)))
		}
	}
	c := support.NewCounter()
	if f.latest {
		c = support.NewLatestCounter()
	}
	c.SetContext(ctx)
	if len(paths) == 0 {
		paths = []string{"-"}
	}
	for _, path := range paths {
		var err error
		if path == "-" {
			err = c.ReadStream(io.In)
		} else {
			err = c.ReadPath(path)
		}
		if ctx.Err() != nil {
			return interruptedStatus
		}
		if err != nil {
			c.Unreadable()
		}
	}
	s := c.Summary()
	s.ListDevices = f.devices
	if err := support.WriteSummary(io.Out, s, f.format); err != nil {
		return failWrite(p)
	}
	if s.Unreadable > 0 {
		fmt.Fprintf(io.Err, "%swarning: %d file(s) could not be read to the end; the summary leaves out what they hold\n", report.Prefix, s.Unreadable)
	}
	return 0
}

// interruptedStatus is what a support command returns when its context
// ended; interruptible has already reported it.
const interruptedStatus = -1
