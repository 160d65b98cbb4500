// Package cli is ctrld-install's command line: the flags of each command,
// the request they make, and the one call into the pipeline and the
// emitter; cmd/ctrld-install's main sets up signals and exits.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/decide"
	"github.com/Control-D-Inc/ctrld-install/internal/install"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/profile"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/support"
)

// Stdio are the command's standard streams.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

type stdio = Stdio

// version and commitStamp are the build's, set by Run from main, where
// scripts/release.sh stamps them.
var version, commitStamp string

// Run dispatches the subcommand and returns the process exit status.
func Run(ctx context.Context, args []string, io Stdio, buildVersion, buildCommit string) int {
	version, commitStamp = buildVersion, buildCommit
	return run(ctx, args, io)
}

var commands = []string{"install", "verify", "uninstall", "status", "codes", "explain", "summarize", "version"}

// run dispatches the subcommand and returns the process exit status.
func run(ctx context.Context, args []string, io stdio) int {
	cmd := "install"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		if !slices.Contains(commands, args[0]) {
			// Never recorded: a typo of status must not overwrite the
			// device's outcome, and the word may be a misplaced token.
			msg := "unknown command; the commands are " + strings.Join(commands, ", ")
			if near := support.NearestWord(args[0], commands); near != "" {
				msg = "unknown command; did you mean " + near + "?"
			}
			return failUsage(report.New(io.Out, io.Err, nil, before(args[1:], "--json")), nil, usagef("%s", msg))
		}
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "verify":
		return runVerify(ctx, args, io)
	case "uninstall":
		return runUninstall(ctx, args, io)
	case "status":
		return interruptible(ctx, io, func(io stdio) int { return runStatus(args, io) })
	case "version":
		return runVersion(args, io)
	case "codes":
		return interruptible(ctx, io, func(io stdio) int { return runCodes(args, io) })
	case "explain":
		return interruptible(ctx, io, func(io stdio) int { return runExplain(args, io) })
	case "summarize":
		return interruptible(ctx, io, func(io stdio) int { return runSummarize(ctx, args, io) })
	}
	return runInstall(ctx, args, io)
}

func usagef(format string, a ...any) error {
	return &install.UsageError{Msg: fmt.Sprintf(format, a...)}
}

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
		// A suggestion within two edits reveals at most two characters.
		if len(name) >= 3 {
			if near := support.NearestWord(name, knownFlags()); near != "" {
				return usagef("an unknown flag was given; did you mean --%s?", near)
			}
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

// knownFlags lists every long flag of every command, from the flag sets.
func knownFlags() []string {
	var names []string
	for _, fs := range []*pflag.FlagSet{installFlagSet(new(installFlags)), uninstallFlagSet(new(uninstallFlags)),
		statusFlagSet(new(statusFlags)), summarizeFlagSet(new(summarizeFlags))} {
		fs.VisitAll(func(f *pflag.Flag) {
			if !slices.Contains(names, f.Name) {
				names = append(names, f.Name)
			}
		})
	}
	return names
}

func newFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	return fs
}

// failUsage reports a usage error the way every other failure is reported:
// the error sentence on stderr, then the INSTALLER_USAGE lines, through
// decide and the one emitter. j is where it is recorded, nil for nowhere.
func failUsage(p *report.Printer, j *install.Journal, err error) int {
	return failUsageOf(outcome.Install, p, j, err)
}

// failUsageOf is failUsage for a command whose failure line has its own
// verb (uninstall failed: …, verify failed: …).
func failUsageOf(cmd outcome.Command, p *report.Printer, j *install.Journal, err error) int {
	p.Errorf("%s", err.Error())
	defer j.Close()
	return report.Emit(p, sinkOf(j), decide.Installer(cmd, codes.InstallerUsage), profile.Default, version)
}

// sinkOf keeps a nil journal a nil sink.
func sinkOf(j *install.Journal) report.Sink {
	if j == nil {
		return nil
	}
	return j
}

// parseFlags parses a subcommand's flags. It answers -h with the usage
// text, and a parse error or positional arguments where the command takes
// none (noArgs names the command) with a usage error. done says the
// command has finished with status code.
func parseFlags(fs *pflag.FlagSet, args []string, p *report.Printer, io stdio, noArgs string) (code int, done bool) {
	help, err := parseArgs(fs, args, io, noArgs)
	switch {
	case help:
		return 0, true
	case err != nil:
		return failUsageOf(commandOf(noArgs), p, nil, err), true
	}
	return 0, false
}

// parseArgs parses args into fs. help says -h was given and the usage
// printed; err is the usage error to report, for a command that sets up
// its surfaces (the log) from the flags parsed before reporting it.
func parseArgs(fs *pflag.FlagSet, args []string, io stdio, noArgs string) (help bool, err error) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprint(io.Out, usage())
			return true, nil
		}
		return false, flagError(err)
	}
	if noArgs != "" && fs.NArg() > 0 {
		return false, usagef("%s takes no arguments", noArgs)
	}
	return false, nil
}

// commandOf is the outcome command of a subcommand's name.
func commandOf(name string) outcome.Command {
	switch name {
	case "verify":
		return outcome.Verify
	case "uninstall":
		return outcome.Uninstall
	}
	return outcome.Install
}

func runVersion(args []string, io stdio) int {
	if len(args) > 0 {
		return failUsage(report.New(io.Out, io.Err, nil, false), nil, usagef("version takes no arguments"))
	}
	fmt.Fprintf(io.Out, "ctrld-install %s (commit %s, %s)\n", version, commit(), runtime.Version())
	return 0
}

func commit() string {
	if commitStamp != "" {
		return commitStamp
	}
	rev, dirty := "unknown", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value[:min(12, len(s.Value))]
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if dirty && rev != "unknown" {
		rev += "-dirty"
	}
	return rev
}
