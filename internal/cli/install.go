package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/home"
	"github.com/Control-D-Inc/ctrld-install/internal/install"
	"github.com/Control-D-Inc/ctrld-install/internal/lock"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/simulate"
	"github.com/Control-D-Inc/ctrld-install/internal/status"
)

func defineInstall(a *app, fs *pflag.FlagSet) action {
	f := new(installFlags)
	f.register(fs, a.defaults)
	return f.run
}

// installUsageJournal records a usage error of install in the home the
// command line names (found even when parsing stopped early), never for a
// simulation.
func installUsageJournal(a *app, c *call) *install.Journal {
	if flagString(c.fs, "simulate") != "" || before(c.args, "--simulate") {
		return nil
	}
	return install.UsageJournal(homeArg(c.args, flagString(c.fs, "home")), install.OSDeps(), a.build.Version)
}

func (f *installFlags) run(a *app, c *call) int {
	cfg, err := f.config(a)
	if err == nil {
		cfg.Extra, err = extraArgs(c.fs)
	}
	f.src.Stdin, f.src.Getenv = a.io.In, os.Getenv
	if err == nil && (f.retries < 0 || f.retries > 10) {
		err = Usagef("--retries must be between 0 and 10")
	}
	var sim *simulate.World
	if err == nil && f.simulate != "" {
		sim, err = simulation(&cfg, f, c.fs.Changed("timeout"))
	}
	if sim != nil {
		defer sim.Cleanup()
	}
	if err == nil {
		err = f.src.Check()
	}
	if err != nil {
		return a.failUsage(c, err)
	}
	cfg.Retries, cfg.Force, cfg.DryRun = f.retries, f.force, f.dryRun
	cfg.ResultFile, cfg.ServiceLogs, cfg.Secret = f.resultFile, f.serviceLogs, f.src.Read
	if cfg.ResultFile == "" {
		cfg.ResultFile = filepath.Join(cfg.Home, "provision_result.json")
	}
	o, j := install.Run(a.ctx, cfg, deps(sim), c.p)
	defer j.Close()
	return report.Emit(c.p, sinkOf(j), o, f.profile(), a.build.Version)
}

func simulation(cfg *install.Config, f *installFlags, timeoutSet bool) (*simulate.World, error) {
	c, ok := codes.LookupFold(f.simulate)
	if !ok {
		return nil, Usagef("--simulate needs a registered code (ctrld-install codes lists them) or OK")
	}
	if c.Name == codes.InstallerUsage {
		return nil, Usagef("the simulated command line is invalid (--simulate INSTALLER_USAGE)")
	}
	self, err := os.Executable()
	if err != nil {
		return nil, Usagef("cannot find the ctrld-install executable for the simulation")
	}
	w, err := simulate.New(c, self)
	if err != nil {
		return nil, Usagef("cannot prepare the simulation")
	}
	fallback := install.Token("simulated-token")
	f.src.Fallback = &fallback
	cfg.Home, cfg.Ctrld, cfg.CtrldArgv0 = w.Home, w.Ctrld, w.Argv0
	f.resultFile, cfg.ServiceFile, f.serviceLogs = w.ResultFile, w.ServiceFile, nil
	cfg.Env = append(cfg.Env, w.Env...)
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
		// The simulated world's faults enter as the world does.
		d.Privileged = func() (bool, error) { return !sim.NotRoot, nil }
		if sim.HoldLock {
			d.Lock = func(ctx context.Context, home string) (*lock.Lock, error) {
				// Another holder, as a second run would be: the lock is
				// per open file.
				if holder, err := lock.Acquire(ctx, home); err == nil {
					defer holder.Release()
				}
				return lock.Acquire(ctx, home)
			}
		}
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
		return nil, Usagef("unexpected argument before --; extra flags for ctrld start go after --")
	}
	for _, a := range rest {
		name, _, _ := strings.Cut(a, "=")
		if name == install.FlagResolver || name == install.FlagToken || name == install.FlagResolver[1:] || name == install.FlagToken[1:] {
			return nil, Usagef("--cd and --cd-org cannot be passed after --; use --token or --resolver")
		}
	}
	return rest, nil
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

func defineUninstall(a *app, fs *pflag.FlagSet) action {
	f := new(uninstallFlags)
	f.register(fs, a.defaults)
	return f.run
}

func (f *uninstallFlags) run(a *app, c *call) int {
	cfg, err := f.config(a)
	if err == nil && f.pin.File != "" && f.pin.Stdin {
		err = Usagef("give only one of --pin-file and --pin-stdin")
	}
	if err != nil {
		return a.failUsage(c, err)
	}
	f.pin.In = a.io.In
	cfg.Secret, cfg.Cleanup = f.pin.Read, f.cleanup
	o, j := install.Uninstall(a.ctx, cfg, install.OSDeps(), c.p)
	defer j.Close()
	return report.Emit(c.p, sinkOf(j), o, f.profile(), a.build.Version)
}

func defineVerify(a *app, fs *pflag.FlagSet) action {
	f := new(verifyFlags)
	f.register(fs, a.defaults)
	return f.run
}

func (f *verifyFlags) run(a *app, c *call) int {
	cfg, err := f.config(a)
	if err != nil {
		return a.failUsage(c, err)
	}
	o := install.Verify(a.ctx, cfg, install.OSDeps(), c.p)
	return report.Emit(c.p, nil, o, f.profile(), a.build.Version)
}

type statusFlags struct{ home, format string }

func defineStatus(a *app, fs *pflag.FlagSet) action {
	f := new(statusFlags)
	fs.StringVar(&f.home, "home", a.defaults.Home, "")
	fs.StringVar(&f.format, "format", "text", "")
	return f.run
}

// run prints the last recorded outcome. It exits 0 whenever it could say
// something, including "never run": it reports, it does not judge.
func (f *statusFlags) run(a *app, c *call) int {
	if !slices.Contains([]string{"text", "json", "jamf-ea"}, f.format) {
		return a.failUsage(c, Usagef("--format must be text, json or jamf-ea"))
	}
	r := status.Load(f.home, func(home string) bool {
		held, _ := lock.Held(home)
		return held
	})
	var err error
	switch f.format {
	case "jamf-ea":
		_, err = fmt.Fprintf(a.io.Out, "<result>%s</result>\n", r.Word())
	case "json":
		err = r.WriteJSON(a.io.Out)
	default:
		err = r.WriteText(a.io.Out)
	}
	if err != nil {
		return a.failWrite(c)
	}
	return 0
}
