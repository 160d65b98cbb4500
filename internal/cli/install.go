package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/home"
	"github.com/Control-D-Inc/ctrld-install/internal/install"
	"github.com/Control-D-Inc/ctrld-install/internal/lock"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/platform"
	"github.com/Control-D-Inc/ctrld-install/internal/profile"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/simulate"
	"github.com/Control-D-Inc/ctrld-install/internal/status"
)

func installFlagSet(f *installFlags) *pflag.FlagSet {
	fs := newFlagSet("ctrld-install")
	f.register(fs)
	return fs
}

func uninstallFlagSet(f *uninstallFlags) *pflag.FlagSet {
	fs := newFlagSet("ctrld-install uninstall")
	f.register(fs)
	return fs
}

func runInstall(ctx context.Context, args []string, io stdio) int {
	var f installFlags
	fs := installFlagSet(&f)
	err := fs.Parse(args)
	if err == pflag.ErrHelp {
		fmt.Fprint(io.Out, usage())
		return 0
	}
	// The output mode and log are set up even after a parse error, so a
	// usage error reaches the same surfaces as any other failure.
	p := report.New(io.Out, io.Err, nil, f.json || before(args, "--json"))
	defer p.OpenLog(f.logPath, header("install", f.exitProfile))()
	// A usage error is recorded in the home the command line names (found
	// even when parsing stopped early), never for a simulation.
	simulating := f.simulate != "" || before(args, "--simulate")
	usageJournal := func() *install.Journal {
		if simulating {
			return nil
		}
		return install.UsageJournal(homeArg(args, f.home), install.OSDeps(), version)
	}
	if err != nil {
		return failUsage(p, usageJournal(), flagError(err))
	}
	cfg, err := f.config()
	if err == nil {
		cfg.Extra, err = extraArgs(fs)
	}
	f.src.Stdin, f.src.Getenv = io.In, os.Getenv
	if err == nil && (f.retries < 0 || f.retries > 10) {
		err = usagef("--retries must be between 0 and 10")
	}
	var sim *simulate.World
	if err == nil && simulating {
		sim, err = simulation(&cfg, &f, fs.Changed("timeout"))
	}
	if sim != nil {
		defer sim.Cleanup()
	}
	if err == nil {
		err = f.src.Check()
	}
	if err != nil {
		return failUsage(p, usageJournal(), err)
	}
	cfg.Retries, cfg.Force = f.retries, f.force
	cfg.ResultFile, cfg.ServiceLogs, cfg.Secret = f.resultFile, f.serviceLogs, f.src.Read
	if cfg.ResultFile == "" {
		cfg.ResultFile = filepath.Join(cfg.Home, "provision_result.json")
	}
	o, j := install.Run(ctx, cfg, deps(sim), p)
	defer j.Close()
	return report.Emit(p, sinkOf(j), o, f.profile(), version)
}

func simulation(cfg *install.Config, f *installFlags, timeoutSet bool) (*simulate.World, error) {
	c, ok := codes.LookupFold(f.simulate)
	if !ok {
		return nil, usagef("--simulate needs a registered code (ctrld-install codes lists them) or OK")
	}
	if c.Name == codes.InstallerUsage {
		return nil, usagef("the simulated command line is invalid (--simulate INSTALLER_USAGE)")
	}
	self, err := os.Executable()
	if err != nil {
		return nil, usagef("cannot find the ctrld-install executable for the simulation")
	}
	w, err := simulate.New(c, self)
	if err != nil {
		return nil, usagef("cannot prepare the simulation")
	}
	fallback := install.Token("simulated-token")
	f.src.Fallback = &fallback
	cfg.Home, cfg.Ctrld, cfg.CtrldArgv0 = w.Home, w.Ctrld, w.Argv0
	f.resultFile, cfg.ServiceFile, f.serviceLogs = w.ResultFile, w.ServiceFile, nil
	cfg.Env = append(cfg.Env, w.Env...)
	cfg.Fault = install.Fault{NotRoot: w.NotRoot, HoldLock: w.HoldLock}
	if cfg.MinVersion == nil {
		cfg.MinVersion = w.MinVersion
	}
	if !timeoutSet {
		cfg.Timeout = simulate.DefaultTimeout
	}
	return w, nil
}

// deps are the real machine's, except that a simulation needs no root and
// its service file is the stand-in's.
func deps(sim *simulate.World) install.Deps {
	d := install.OSDeps()
	if sim != nil {
		d.Privileged = func() (bool, error) { return true, nil }
		d.CheckHome = home.Checker{UID: os.Geteuid()}.Prepare
		d.ServiceRegistered = func(p string) bool {
			fi, err := os.Lstat(p)
			return err == nil && fi.Mode().IsRegular()
		}
	}
	return d
}

// extraArgs are the flags after "--" for ctrld start.
func extraArgs(fs *pflag.FlagSet) ([]string, error) {
	rest, at := fs.Args(), fs.ArgsLenAtDash()
	if at < 0 {
		at = len(rest)
	}
	if at > 0 {
		return nil, usagef("unexpected argument before --; extra flags for ctrld start go after --")
	}
	for _, a := range rest {
		name, _, _ := strings.Cut(a, "=")
		if name == "--cd" || name == "--cd-org" || name == "-cd" || name == "-cd-org" {
			return nil, usagef("--cd and --cd-org cannot be passed after --; use --token or --resolver")
		}
	}
	return rest, nil
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

// homeArg finds --home before "--" even when parsing stopped early.
func homeArg(args []string, parsed string) string {
	for i, a := range args {
		switch {
		case a == "--":
			return parsed
		case a == "--home" && i+1 < len(args):
			parsed = args[i+1]
		case strings.HasPrefix(a, "--home="):
			parsed = strings.TrimPrefix(a, "--home=")
		}
	}
	return parsed
}

// header is the first line a run writes into --log: fixed words only.
func header(cmd, prof string) string {
	return fmt.Sprintf("run started: ctrld-install %s, command %s, exit profile %s, pid %d", version, cmd, profileWord(prof), os.Getpid())
}

// profileWord never repeats an invalid value: it was typed.
func profileWord(prof string) string {
	if profile.Valid(prof) {
		return prof
	}
	return "invalid"
}

func runUninstall(ctx context.Context, args []string, io stdio) int {
	var f uninstallFlags
	fs := uninstallFlagSet(&f)
	help, err := parseArgs(fs, args, io, "uninstall")
	if help {
		return 0
	}
	// As for install, the output mode and the log are set up before a
	// usage error is reported, so it reaches them too.
	p := report.New(io.Out, io.Err, nil, f.json || before(args, "--json"))
	defer p.OpenLog(f.logPath, header("uninstall", f.exitProfile))()
	if err != nil {
		return failUsageOf(outcome.Uninstall, p, nil, err)
	}
	cfg, err := f.config()
	if err != nil {
		return failUsageOf(outcome.Uninstall, p, nil, err)
	}
	if f.pin.File != "" && f.pin.Stdin {
		return failUsageOf(outcome.Uninstall, p, nil, usagef("give only one of --pin-file and --pin-stdin"))
	}
	f.pin.In = io.In
	cfg.Secret, cfg.Cleanup = f.pin.Read, f.cleanup
	o, j := install.Uninstall(ctx, cfg, install.OSDeps(), p)
	defer j.Close()
	return report.Emit(p, sinkOf(j), o, f.profile(), version)
}

func runVerify(ctx context.Context, args []string, io stdio) int {
	var f verifyFlags
	fs := newFlagSet("ctrld-install verify")
	f.register(fs)
	p := report.New(io.Out, io.Err, nil, before(args, "--json"))
	if code, done := parseFlags(fs, args, p, io, "verify"); done {
		return code
	}
	p = report.New(io.Out, io.Err, nil, f.json)
	cfg, err := f.config()
	if err != nil {
		return failUsageOf(outcome.Verify, p, nil, err)
	}
	o := install.Verify(ctx, cfg, install.OSDeps(), p)
	return report.Emit(p, nil, o, f.profile(), version)
}

type statusFlags struct{ home, format string }

func statusFlagSet(f *statusFlags) *pflag.FlagSet {
	fs := newFlagSet("ctrld-install status")
	fs.StringVar(&f.home, "home", platform.Current.Home, "")
	fs.StringVar(&f.format, "format", "text", "")
	return fs
}

// runStatus prints the last recorded outcome. It exits 0 whenever it could
// say something, including "never run": it reports, it does not judge.
func runStatus(args []string, io stdio) int {
	var f statusFlags
	fs := statusFlagSet(&f)
	p := report.New(io.Out, io.Err, nil, false)
	if code, done := parseFlags(fs, args, p, io, "status"); done {
		return code
	}
	r := status.Load(f.home, func(home string) bool {
		held, _ := lock.Held(home)
		return held
	})
	switch f.format {
	case "jamf-ea":
		fmt.Fprintf(io.Out, "<result>%s</result>\n", r.Word())
	case "json":
		_ = r.WriteJSON(io.Out)
	case "text":
		r.WriteText(p)
	default:
		return failUsage(p, nil, usagef("--format must be text, json or jamf-ea"))
	}
	return 0
}
