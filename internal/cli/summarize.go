package cli

import (
	"errors"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/spf13/pflag"

	"github.com/Control-D-Inc/ctrld-install/internal/fleet"
	"github.com/Control-D-Inc/ctrld-install/internal/fleetreport"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
)

// summarizeMemoryLimit is the heap summarize aims to stay under.
const summarizeMemoryLimit = 48 << 20

type summarizeFlags struct {
	format          string
	latest, devices bool
	csvColumn       string
	csvDevice       string
}

// defineSummarize counts the outcomes in logs and outcome records, read
// from the named files and directories or from standard input. Like status
// it reports and does not judge: it exits 0 whenever it printed a summary.
func defineSummarize(_ *app, fs *pflag.FlagSet) action {
	f := new(summarizeFlags)
	fs.StringVar(&f.format, "format", "text", "")
	fs.BoolVar(&f.latest, "latest", false, "")
	fs.BoolVar(&f.devices, "devices", false, "")
	fs.StringVar(&f.csvColumn, "csv-column", "", "")
	fs.StringVar(&f.csvDevice, "csv-device-column", "", "")
	return f.run
}

func (f *summarizeFlags) run(a *app, c *call) int {
	if !slices.Contains(fleetreport.Formats, f.format) {
		return a.failUsage(c, Usagef("--format must be text, json, csv, markdown or html"))
	}
	csvMode := c.fs.Changed("csv-column")
	if csvMode && f.csvColumn == "" {
		return a.failUsage(c, Usagef("--csv-column takes the name of a column of the export's header"))
	}
	if c.fs.Changed("csv-device-column") && (!csvMode || f.csvDevice == "") {
		return a.failUsage(c, Usagef("--csv-device-column takes a column name, and only with --csv-column"))
	}
	paths := c.fs.Args()
	// Every name is checked before anything is read, so a typo fails
	// before a partial summary is printed. Names are not repeated: a log
	// file name is as untrusted as its content.
	for i, path := range paths {
		if path == "-" {
			continue
		}
		switch err := fleet.CheckPath(path); {
		case errors.Is(err, fleet.ErrNotFile):
			// A FIFO or a device could block or never end; a pipe is
			// read from standard input, where a signal can stop it.
			return a.failUsage(c, Usagef("input %d of %d is not a regular file or directory; pipe a stream to standard input with -", i+1, len(paths)))
		case err != nil:
			return a.failUsage(c, Usagef("input %d of %d cannot be found", i+1, len(paths)))
		case csvMode && fleet.IsDir(path):
			return a.failUsage(c, Usagef("input %d of %d is a directory; with --csv-column give the export's CSV files or -", i+1, len(paths)))
		}
	}
	// A fleet report of 100,000 devices holds about 25 MiB live while it
	// reads and 36 MiB once it has made its rows; left to its default, the
	// collector lets the heap grow to twice what is live, and the bench's
	// fleet then peaks at 62-65 MiB, over its budget of 64 more often than
	// not. A soft limit keeps the heap near what is live (49-55 MiB at the
	// peak) for a few more collections; a larger fleet goes over it rather
	// than failing.
	debug.SetMemoryLimit(summarizeMemoryLimit)
	counter := fleet.NewCounter()
	if f.latest {
		counter = fleet.NewLatestCounter()
	}
	counter.SetContext(a.ctx)
	if len(paths) == 0 {
		paths = []string{"-"}
	}
	cols := fleet.CSVColumns{Code: f.csvColumn, Device: f.csvDevice}
	for i, path := range paths {
		var err error
		switch {
		case csvMode && path == "-":
			err = counter.ReadCSV(a.io.In, cols)
		case csvMode:
			err = counter.ReadCSVPath(path, cols)
		case path == "-":
			err = counter.ReadStream(a.io.In)
		default:
			err = counter.ReadPath(path)
		}
		if errors.Is(err, fleet.ErrNoColumn) {
			// The header's names are the export's text; the flag's value
			// is what the person typed, and is not repeated either.
			return a.failUsage(c, Usagef("input %d of %d has no column of the name given to --csv-column or --csv-device-column in its first line", i+1, len(paths)))
		}
		if err != nil {
			counter.Unreadable()
		}
	}
	s := counter.Summary()
	s.ListDevices = f.devices
	if err := fleetreport.Write(a.io.Out, s, f.format); err != nil {
		return a.failWrite(c)
	}
	if s.Unreadable > 0 {
		fmt.Fprintf(a.io.Err, "%swarning: %d file(s) could not be read to the end; the summary leaves out what they hold\n", report.Prefix, s.Unreadable)
	}
	return 0
}
