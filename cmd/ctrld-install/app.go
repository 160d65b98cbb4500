package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/support"
)

// version is stamped at release time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// run dispatches the subcommand and returns the process exit status.
func run(ctx context.Context, args []string, io stdio) int {
	cmd := "install"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "install", "verify", "status", "version", "codes", "explain", "summarize":
			cmd, args = args[0], args[1:]
		}
	}
	switch cmd {
	case "verify":
		return runVerify(ctx, args, io)
	case "status":
		return runStatus(args, io)
	case "version":
		return runVersion(args, io)
	case "codes":
		return runCodes(args, io)
	case "explain":
		return runExplain(args, io)
	case "summarize":
		return runSummarize(args, io)
	}
	return runInstall(ctx, args, io)
}

// usageError is a command-line mistake; its text never contains a value
// from the command line, which may be a misplaced token.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

// flagError turns a pflag error into a sentence that repeats nothing that
// was typed: a token pasted next to a flag (--tokenk3x9) must not reach the
// installer log. An unknown flag is named only when it is one of
// ctrld-install's own flags (used with the wrong command), and a near miss
// gets the flag it probably meant.
func flagError(err error) error {
	var notExist *pflag.NotExistError
	var needsValue *pflag.ValueRequiredError
	var invalid *pflag.InvalidValueError
	switch {
	case errors.As(err, &notExist):
		name := notExist.GetSpecifiedName()
		if len(name) > 1 && slices.Contains(knownFlags(), name) {
			return usagef("unknown flag --%s", name)
		}
		if near := nearestFlag(name); near != "" {
			return usagef("an unknown flag was given; did you mean --%s?", near)
		}
		return usagef("an unknown flag was given")
	case errors.As(err, &needsValue):
		return usagef("flag --%s needs a value", needsValue.GetFlag().Name)
	case errors.As(err, &invalid):
		name := invalid.GetFlag().Name
		if invalid.GetFlag().Value.Type() == "duration" {
			return usagef("--%s needs a duration such as 5m or 90s", name)
		}
		return usagef("--%s has an invalid value", name)
	}
	return usagef("the command line cannot be parsed")
}

// knownFlags lists every long flag the usage text documents for
// ctrld-install; --cd and --cd-org appear there as ctrld's own.
var knownFlags = sync.OnceValue(func() []string {
	var names []string
	for _, f := range strings.Fields(usage) {
		name, ok := strings.CutPrefix(strings.Trim(f, "[],.()"), "--")
		if !ok || name == "" || strings.ContainsAny(name, "=|") || slices.Contains(names, name) ||
			name == "cd" || name == "cd-org" {
			continue
		}
		names = append(names, name)
	}
	return names
})

// nearestFlag returns the documented flag within two edits of name, if one
// is. Such a suggestion reveals at most two characters of what was typed.
func nearestFlag(name string) string {
	if len(name) < 3 {
		return "" // a shorthand or a stub: any guess would be noise
	}
	best, bestD := "", 3
	for _, k := range knownFlags() {
		if d := support.EditDistance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func newFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	return fs
}

// failUsage reports a usage error the way every other failure is reported:
// the error sentence on stderr, then the INSTALLER_USAGE lines.
func failUsage(p *report.Printer, err error) int {
	p.Errorf("%s", err.Error())
	s := record.NewSummary(codes.Must(codes.InstallerUsage))
	s.Source = "installer"
	s.InstallerVersion = version
	s.ResultFile = "absent"
	p.Final(s)
	return s.ExitCode
}

func runVersion(args []string, io stdio) int {
	p := report.New(io.out, io.err, nil, false)
	if len(args) > 0 {
		return failUsage(p, usagef("version takes no arguments"))
	}
	fmt.Fprintf(io.out, "ctrld-install %s (commit %s, %s)\n", version, commit(), runtime.Version())
	return 0
}

// commitStamp is stamped by scripts/release.sh with -ldflags
// "-X main.commitStamp=...". Release builds leave the VCS build settings
// out (-buildvcs=false) so that a build from a source export is
// byte-identical to one from a git checkout; the stamp carries the commit
// instead.
var commitStamp string

func commit() string {
	if commitStamp != "" {
		return commitStamp
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if rev != "" && dirty {
			rev += "-dirty"
		}
		if rev != "" {
			return rev
		}
	}
	return "unknown"
}

// parseFlags parses a subcommand's flags. It answers -h with the usage
// text and a parse error, or positional arguments where the command takes
// none (noArgs names the command), with a usage error. done says the
// command has finished with status code.
func parseFlags(fs *pflag.FlagSet, args []string, p *report.Printer, io stdio, noArgs string) (code int, done bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflagErrHelp) {
			io.out.Write([]byte(usage))
			return 0, true
		}
		return failUsage(p, flagError(err)), true
	}
	if noArgs != "" && fs.NArg() > 0 {
		return failUsage(p, usagef("%s takes no arguments", noArgs)), true
	}
	return 0, false
}

// pflagErrHelp is pflag's answer to -h and --help.
var pflagErrHelp = pflag.ErrHelp

func environ() []string { return os.Environ() }

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Now()
	}
	return t
}
