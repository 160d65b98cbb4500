// Package cli is ctrld-install's command line: a table of commands, each
// with its flags and what it runs, one path that parses every command line,
// and the one call into the pipeline and the emitter. cmd/ctrld-install's
// main sets up signals and exits.
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
	"github.com/Control-D-Inc/ctrld-install/internal/platform"
	"github.com/Control-D-Inc/ctrld-install/internal/profile"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
)

// Stdio are the command's standard streams.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Build is what the release stamped into main.
type Build struct {
	Version string
	Commit  string // "" reads the VCS settings Go recorded
}

// Run runs one command line and returns the process exit status. ctx
// ending stops a device command as a signal would; Run installs no signal
// handlers (tests call it in their own process).
func Run(ctx context.Context, args []string, io Stdio, b Build) int {
	a := &app{ctx: ctx, io: io, build: b, defaults: platform.Current}
	return a.run(args)
}

// Main is Run for the process: a device command's run ends with its final
// line on SIGINT, SIGTERM, SIGHUP and the signals Go would crash on; a
// report command keeps Go's default behaviour and ends at once, as any
// Unix tool. A write to a closed pipe fails instead of killing either.
func Main(args []string, io Stdio, b Build) int {
	ignorePipeSignal()
	a := &app{ctx: context.Background(), io: io, build: b, defaults: platform.Current, signals: true}
	return a.run(args)
}

type app struct {
	ctx      context.Context // a device command's: done on the signals it stops on
	io       Stdio
	build    Build
	defaults platform.Defaults // the flags' default paths
	signals  bool              // a device command listens for stopSignals
}

// kind says how a command's failures end.
type kind int

const (
	// deviceKind commands provision, check or remove ctrld: every way they
	// end, a usage error included, is an outcome with its identifier line.
	deviceKind kind = iota
	// reportKind commands read and print (status, codes, explain,
	// summarize, version). Their failures are the error line and the exit
	// status only: a provisioning failure line there would be counted by
	// fleet reports as a device's outcome.
	reportKind
)

// command is one row of the command table.
type command struct {
	name     string
	synopsis string // the usage line after "ctrld-install "
	kind     kind
	verb     outcome.Command // the failure line's verb, for deviceKind
	noArgs   bool            // positional arguments are a usage error
	// define registers the command's flags on fs and returns what runs
	// once they are parsed.
	define func(a *app, fs *pflag.FlagSet) action
	// usageJournal, when set, is where a usage error is recorded.
	usageJournal func(a *app, c *call) *install.Journal
}

// action runs a command whose command line parsed.
type action func(a *app, c *call) int

// call is one command being run.
type call struct {
	cmd  *command
	fs   *pflag.FlagSet
	args []string // as given: flags are looked for here when parsing stopped early
	p    *report.Printer
}

// commandTable is every command, the default one first. Adding a command is
// adding a row here.
func commandTable() []*command {
	return []*command{
		{name: "install", synopsis: "[install] [flags] [-- extra flags for ctrld start]", kind: deviceKind, verb: outcome.Install,
			define: defineInstall, usageJournal: installUsageJournal},
		{name: "verify", synopsis: "verify [--ctrld PATH] [--home DIR] [--service-file PATH] [--min-version V] [--timeout DURATION] [--json] [--exit-profile NAME]",
			kind: deviceKind, verb: outcome.Verify, noArgs: true, define: defineVerify},
		{name: "uninstall", synopsis: "uninstall [--pin-file PATH | --pin-stdin] [--cleanup] [--ctrld PATH] [--home DIR] [--service-file PATH] [--timeout DURATION] [--log PATH] [--json] [--exit-profile NAME]",
			kind: deviceKind, verb: outcome.Uninstall, noArgs: true, define: defineUninstall},
		{name: "status", synopsis: "status [--home DIR] [--format text|json|jamf-ea]", kind: reportKind, noArgs: true, define: defineStatus},
		{name: "codes", synopsis: "codes [--format text|json|markdown]", kind: reportKind, noArgs: true, define: defineCodes},
		{name: "explain", synopsis: "explain CODE|EXIT|LINE|-", kind: reportKind, define: defineExplain},
		{name: "summarize", synopsis: "summarize [--format text|json|csv|markdown|html] [--latest] [--devices] [--csv-column NAME [--csv-device-column NAME]] [FILE|DIR|-]...", kind: reportKind, define: defineSummarize},
		{name: "version", synopsis: "version", kind: reportKind, noArgs: true, define: defineVersion},
	}
}

func lookup(name string) *command {
	for _, c := range commandTable() {
		if c.name == name {
			return c
		}
	}
	return nil
}

func commandNames() []string {
	var names []string
	for _, c := range commandTable() {
		names = append(names, c.name)
	}
	return names
}

func (a *app) run(args []string) (code int) {
	name := "install"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	cmd := lookup(name)
	if cmd == nil {
		// Ends as install would, since the MDM script most likely meant
		// one of the device commands, but is never recorded: a typo of
		// status must not overwrite the device's outcome, and the word may
		// be a misplaced token.
		names := commandNames()
		msg := "unknown command; the commands are " + strings.Join(names, ", ")
		if near := nearestWord(name, names); near != "" {
			msg = "unknown command; did you mean " + near + "?"
		}
		unknown := &command{kind: deviceKind, verb: outcome.Install}
		a, end := a.device(nil)
		defer end()
		c := &call{cmd: unknown, p: report.New(a.io.Out, a.io.Err, nil, before(args, "--json"))}
		defer a.recoverPanic(c, &code)
		return a.failUsage(c, Usagef("%s", msg))
	}
	return a.exec(cmd, args)
}

// exec is the one path every command line takes: parse, answer -h, set up
// the output mode and the log (even after a parse error, so that a usage
// error reaches the same surfaces as any other failure), then run.
func (a *app) exec(cmd *command, args []string) (code int) {
	fs := newFlagSet("ctrld-install " + cmd.name)
	act := cmd.define(a, fs)
	err := fs.Parse(args)
	if cmd.kind == deviceKind {
		var end func()
		a, end = a.device(fs)
		defer end()
	}
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprint(a.io.Out, usage())
		return 0
	}
	switch {
	case err != nil:
		err = flagError(err)
	case cmd.noArgs && fs.NArg() > 0:
		err = Usagef("%s takes no arguments", cmd.name)
	}
	c := &call{cmd: cmd, fs: fs, args: args, p: report.New(a.io.Out, a.io.Err, nil, jsonMode(fs, args))}
	if f := fs.Lookup("log"); f != nil {
		defer c.p.OpenLog(f.Value.String(), a.header(cmd.name, flagString(fs, "exit-profile")))()
	}
	defer a.recoverPanic(c, &code)
	if err != nil {
		return a.failUsage(c, err)
	}
	return act(a, c)
}

// recoverPanic ends a command that panicked the way its failures end, with
// a fixed sentence: INSTALLER_FAILED's lines for a device command (the
// pipeline has already recorded it when the panic came from there), the
// error line and INSTALLER_FAILED's exit status for a report command.
// Nothing of the panic's value is printed: it may hold what ctrld printed.
func (a *app) recoverPanic(c *call, code *int) {
	if recover() == nil {
		return
	}
	c.p.Errorf("an unexpected error stopped the run")
	failed := codes.Must(codes.InstallerFailed)
	if c.cmd.kind == reportKind {
		*code = failed.Exit
		return
	}
	*code = report.Emit(c.p, nil, decide.Installer(c.cmd.verb, codes.InstallerFailed), profile.Default, a.build.Version)
}

// jsonMode is --json, also when parsing stopped before reaching it.
func jsonMode(fs *pflag.FlagSet, args []string) bool {
	f := fs.Lookup("json")
	return f != nil && (f.Value.String() == "true" || before(args, "--json"))
}

func flagString(fs *pflag.FlagSet, name string) string {
	if f := fs.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// failUsage reports a usage error: the sentence on stderr, then, for a
// device command, the INSTALLER_USAGE lines through decide and the one
// emitter, recorded where the command says.
func (a *app) failUsage(c *call, err error) int {
	c.p.Errorf("%s", err.Error())
	usage := codes.Must(codes.InstallerUsage)
	if c.cmd.kind == reportKind {
		return usage.Exit
	}
	var j *install.Journal
	if c.cmd.usageJournal != nil {
		j = c.cmd.usageJournal(a, c)
	}
	defer j.Close()
	return report.Emit(c.p, sinkOf(j), decide.Installer(c.cmd.verb, codes.InstallerUsage), profile.Default, a.build.Version)
}

// failWrite ends a report command whose output could not be written (a
// closed pipe, a full disk): the sentence on stderr, and INSTALLER_FAILED's
// exit status.
func (a *app) failWrite(c *call) int {
	c.p.Errorf("the output cannot be written")
	return codes.Must(codes.InstallerFailed).Exit
}

// sinkOf keeps a nil journal a nil sink.
func sinkOf(j *install.Journal) report.Sink {
	if j == nil {
		return nil
	}
	return j
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
		known := knownFlags()
		if len(name) > 1 && slices.Contains(known, name) {
			return Usagef("unknown flag --%s", name)
		}
		// A suggestion within two edits reveals at most two characters.
		if len(name) >= 3 {
			if near := nearestWord(name, known); near != "" {
				return Usagef("an unknown flag was given; did you mean --%s?", near)
			}
		}
		return Usagef("an unknown flag was given")
	case errors.As(err, &needsValue):
		return Usagef("flag --%s needs a value", needsValue.GetFlag().Name)
	case errors.As(err, &invalid):
		name := invalid.GetFlag().Name
		if invalid.GetFlag().Value.Type() == "duration" {
			return Usagef("--%s needs a duration such as 5m or 90s", name)
		}
		return Usagef("--%s has an invalid value", name)
	}
	return Usagef("the command line cannot be parsed")
}

// knownFlags lists every long flag of every command, from the table.
func knownFlags() []string {
	var names []string
	for _, c := range commandTable() {
		fs := newFlagSet(c.name)
		c.define(new(app), fs)
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

// before reports whether flag (or flag=...) appears before "--".
func before(args []string, flag string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == flag || strings.HasPrefix(a, flag+"=") {
			return true
		}
	}
	return false
}

// header is the first line a run writes into --log: fixed words only.
func (a *app) header(cmd, prof string) string {
	return fmt.Sprintf("run started: ctrld-install %s, command %s, exit profile %s, pid %d", a.build.Version, cmd, profileWord(prof), pid())
}

// profileWord never repeats an invalid value: it was typed.
func profileWord(prof string) string {
	if profile.Valid(prof) {
		return prof
	}
	return "invalid"
}

func defineVersion(*app, *pflag.FlagSet) action {
	return func(a *app, c *call) int {
		if _, err := fmt.Fprintf(a.io.Out, "ctrld-install %s (commit %s, %s)\n", a.build.Version, a.commit(), runtime.Version()); err != nil {
			return a.failWrite(c)
		}
		return 0
	}
}

func (a *app) commit() string {
	if a.build.Commit != "" {
		return a.build.Commit
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
