package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/install"
	"github.com/Control-D-Inc/ctrld-install/internal/lock"
	"github.com/Control-D-Inc/ctrld-install/internal/platform"
	"github.com/Control-D-Inc/ctrld-install/internal/profile"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/simulate"
)

// tokenEnv is read when no token flag and no --resolver is given.
const tokenEnv = "CTRLD_PROVISION_TOKEN"

// maxSecretLen bounds a token or resolver ID; Control D's are far shorter.
const maxSecretLen = 256

type installFlags struct {
	token, tokenFile, resolver string
	tokenStdin                 bool
	ctrld, home                string
	resultFile, serviceFile    string
	timeout                    time.Duration
	retries                    int
	logPath                    string
	json                       bool
	exitProfile                string
	minVersion                 string
	force                      bool
	simulate                   string
}

func runInstall(ctx context.Context, args []string, io stdio) int {
	var f installFlags
	fs := newFlagSet("ctrld-install")
	fs.StringVar(&f.token, "token", "", "")
	fs.StringVar(&f.tokenFile, "token-file", "", "")
	fs.BoolVar(&f.tokenStdin, "token-stdin", false, "")
	fs.StringVar(&f.resolver, "resolver", "", "")
	fs.StringVar(&f.ctrld, "ctrld", "", "")
	fs.StringVar(&f.home, "home", platform.Current.Home, "")
	fs.StringVar(&f.resultFile, "result-file", "", "")
	fs.StringVar(&f.serviceFile, "service-file", platform.Current.ServiceFile, "")
	fs.DurationVar(&f.timeout, "timeout", 5*time.Minute, "")
	fs.IntVar(&f.retries, "retries", 2, "")
	fs.StringVar(&f.logPath, "log", "", "")
	fs.BoolVar(&f.json, "json", false, "")
	fs.StringVar(&f.exitProfile, "exit-profile", string(profile.Default), "")
	fs.StringVar(&f.minVersion, "min-version", "", "")
	fs.BoolVar(&f.force, "force", false, "")
	fs.StringVar(&f.simulate, "simulate", "", "")

	err := fs.Parse(args)
	if errors.Is(err, pflagErrHelp) {
		io.out.Write([]byte(usage))
		return 0
	}
	// The output mode and log are set up even after a parse error, so a
	// usage error reaches the same surfaces as any other failure.
	p := report.New(io.out, io.err, nil, f.json || jsonRequested(args))
	closeLog := openLog(p, f.logPath)
	defer closeLog()
	if err != nil {
		code := failUsage(p, flagError(err))
		if f.simulate == "" && !simulateRequested(args) {
			recordUsageError(f.home)
		}
		return code
	}
	cfg, prof, sim, err := f.config(fs.Args(), fs.ArgsLenAtDash(), fs.Changed("timeout"), io.in)
	if err != nil {
		code := failUsage(p, err)
		if sim == nil {
			recordUsageError(f.home)
		}
		return code
	}
	if sim != nil {
		defer sim.cleanup()
	}
	s := install.Run(ctx, cfg, p)
	p.Final(s)
	return profile.ExitStatus(prof, codes.Must(s.Code), s.Action == record.ActionSkipped)
}

// jsonRequested finds --json before "--" when parsing stopped early.
func jsonRequested(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--json" || a == "--json=true" {
			return true
		}
	}
	return false
}

// simulateRequested finds --simulate before "--" when parsing stopped early:
// a simulation must not write to the real home even to record a usage error.
func simulateRequested(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--simulate" || strings.HasPrefix(a, "--simulate=") {
			return true
		}
	}
	return false
}

type simulation struct{ home string }

func (s *simulation) cleanup() { os.RemoveAll(s.home) }

// config validates the flags into an install request. It reads the token
// from its source but never puts it in an error.
func (f *installFlags) config(rest []string, atDash int, timeoutSet bool, stdin io.Reader) (install.Config, profile.Name, *simulation, error) {
	var cfg install.Config
	if atDash < 0 {
		atDash = len(rest)
	}
	if atDash > 0 {
		return cfg, "", nil, usagef("unexpected argument before --; extra flags for ctrld start go after --")
	}
	extra := rest[atDash:]
	for _, a := range extra {
		name, _, _ := strings.Cut(a, "=")
		if name == "--cd" || name == "--cd-org" || name == "-cd" || name == "-cd-org" {
			return cfg, "", nil, usagef("--cd and --cd-org cannot be passed after --; use --token or --resolver")
		}
	}
	if f.timeout <= 0 {
		return cfg, "", nil, usagef("--timeout must be positive")
	}
	if f.retries < 0 || f.retries > 10 {
		return cfg, "", nil, usagef("--retries must be between 0 and 10")
	}
	if !profile.Valid(f.exitProfile) {
		return cfg, "", nil, usagef("--exit-profile must be one of default, intune, filewave, jamf")
	}
	if f.minVersion != "" {
		v, err := semver.NewVersion(f.minVersion)
		if err != nil {
			return cfg, "", nil, usagef("--min-version needs a version such as 1.5.0")
		}
		cfg.MinVersion = v
	}
	var sim *simulation
	var plan simulate.Plan
	if f.simulate != "" {
		c, ok := codes.LookupFold(f.simulate)
		if !ok {
			return cfg, "", nil, usagef("--simulate needs a registered code (ctrld-install codes lists them) or OK")
		}
		plan = simulate.PlanFor(c)
	}
	secret, err := f.secret(stdin, f.simulate != "")
	if err != nil {
		return cfg, "", nil, err
	}
	cfg.Secret = secret
	cfg.Extra = extra
	cfg.Timeout = f.timeout
	cfg.Retries = f.retries
	cfg.Force = f.force
	cfg.InstallerVersion = version
	cfg.Privileged = platform.Privileged
	cfg.ServiceRegistered = platform.ServiceRegistered
	cfg.Env = childEnv(environ())

	if f.simulate != "" {
		if plan.UsageError {
			return cfg, "", &simulation{}, usagef("the simulated command line is invalid (--simulate INSTALLER_USAGE)")
		}
		home, err := os.MkdirTemp("", "ctrld-install-simulate-*")
		if err != nil {
			return cfg, "", nil, usagef("cannot create a temporary home for the simulation")
		}
		sim = &simulation{home: home}
		if err := sim.configure(&cfg, plan, timeoutSet); err != nil {
			sim.cleanup()
			return cfg, "", nil, err
		}
		return cfg, profile.Name(f.exitProfile), sim, nil
	}

	cfg.Home = f.home
	cfg.ResultFile = f.resultFile
	if cfg.ResultFile == "" {
		cfg.ResultFile = filepath.Join(cfg.Home, "provision_result.json")
	}
	cfg.ServiceFile = f.serviceFile
	cfg.Ctrld = f.ctrld
	if cfg.Ctrld == "" {
		cfg.Ctrld = platform.DefaultCtrld()
	}
	// Never a PATH lookup: a relative name is taken from the working directory.
	if abs, err := filepath.Abs(cfg.Ctrld); err == nil {
		cfg.Ctrld = abs
	}
	return cfg, profile.Name(f.exitProfile), nil, nil
}

func (s *simulation) configure(cfg *install.Config, plan simulate.Plan, timeoutSet bool) error {
	self, err := os.Executable()
	if err != nil {
		return usagef("cannot find the ctrld-install executable for the simulation")
	}
	cfg.Home = s.home
	cfg.ResultFile = simulate.ResultFile(s.home)
	cfg.ServiceFile = simulate.ServiceFile(s.home)
	cfg.Ctrld = self
	cfg.CtrldArgv0 = simulate.Argv0
	cfg.Privileged = func() (bool, error) { return true, nil }
	cfg.ServiceRegistered = func(p string) bool {
		fi, err := os.Lstat(p)
		return err == nil && fi.Mode().IsRegular()
	}
	cfg.Fault = install.Fault{NotRoot: plan.NotRoot, HoldLock: plan.HoldLock}
	switch {
	case plan.MissingCtrld:
		cfg.Ctrld = filepath.Join(s.home, "missing", "ctrld")
	case plan.BrokenCtrld:
		cfg.Ctrld = filepath.Join(s.home, "ctrld")
		if err := os.WriteFile(cfg.Ctrld, []byte("not a program\n"), 0o755); err != nil {
			return usagef("cannot prepare the simulation")
		}
	}
	if plan.MinVersion != "" && cfg.MinVersion == nil {
		cfg.MinVersion = semver.MustParse(plan.MinVersion)
	}
	if !timeoutSet {
		cfg.Timeout = simulate.DefaultTimeout
	}
	cfg.Env = append(cfg.Env, simulate.EnvCode+"="+plan.Code.Name, simulate.EnvHome+"="+s.home)
	return nil
}

// secret finds the one token or resolver ID the run uses.
func (f *installFlags) secret(stdin io.Reader, simulating bool) (install.Secret, error) {
	n := 0
	for _, given := range []bool{f.token != "", f.tokenFile != "", f.tokenStdin, f.resolver != ""} {
		if given {
			n++
		}
	}
	if n > 1 {
		return install.Secret{}, usagef("give only one of --token, --token-file, --token-stdin and --resolver")
	}
	switch {
	case f.resolver != "":
		if err := validSecret(f.resolver); err != nil {
			return install.Secret{}, usagef("the resolver ID %s", err.Error())
		}
		return install.Resolver(f.resolver), nil
	case f.token != "":
		return tokenSecret(f.token)
	case f.tokenFile != "":
		file, err := os.Open(f.tokenFile)
		if err != nil {
			return install.Secret{}, usagef("cannot read the token file")
		}
		defer file.Close()
		t, err := firstLine(file)
		if err != nil {
			return install.Secret{}, usagef("cannot read the token file")
		}
		return tokenSecret(t)
	case f.tokenStdin:
		t, err := firstLine(stdin)
		if err != nil {
			return install.Secret{}, usagef("cannot read the token from standard input")
		}
		return tokenSecret(t)
	}
	if t := os.Getenv(tokenEnv); t != "" {
		return tokenSecret(t)
	}
	if simulating {
		return install.Token("simulated-token"), nil
	}
	return install.Secret{}, usagef("no token given: use --token, --token-file, --token-stdin, --resolver or CTRLD_PROVISION_TOKEN")
}

func tokenSecret(t string) (install.Secret, error) {
	if err := validSecret(t); err != nil {
		return install.Secret{}, usagef("the token %s", err.Error())
	}
	return install.Token(t), nil
}

// validSecret accepts printable ASCII without spaces, not starting with a
// dash (ctrld would read it as a flag). The error never contains the value.
func validSecret(s string) error {
	switch {
	case s == "":
		return usagef("is empty")
	case len(s) > maxSecretLen:
		return usagef("is longer than %d characters", maxSecretLen)
	case s[0] == '-':
		return usagef("starts with a dash")
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return usagef("contains white space or control characters")
		}
	}
	return nil
}

// firstLine reads the first line, without its line ending, reading no more
// than a token could need.
func firstLine(r io.Reader) (string, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, 4<<10), 4<<10)
	line, err := br.ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// childEnv is ctrld's environment: the caller's, less the token and this
// program's own variables, with colours off.
func childEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if envIs(name, tokenEnv) || envIs(name, "NO_COLOR") || envHasPrefix(name, "CTRLD_INSTALL_") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "NO_COLOR=1")
}

// Windows environment names ignore case, and os.Getenv finds the token
// under any spelling, so it must be removed under any spelling too.
func envIs(name, want string) bool {
	if runtime.GOOS == "windows" {
		return strings.EqualFold(name, want)
	}
	return name == want
}

func envHasPrefix(name, prefix string) bool {
	return len(name) >= len(prefix) && envIs(name[:len(prefix)], prefix)
}

// openLog starts copying lines to --log. A log that cannot be opened is
// reported and the run goes on: the exit status and stdout still carry the
// outcome.
func openLog(p *report.Printer, path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := openAppend(path)
	if err != nil {
		p.Errorf("cannot open the log file; continuing without it")
		return func() {}
	}
	p.SetLog(f)
	return func() {
		p.SetLog(nil)
		f.Close()
	}
}

// recordUsageError records INSTALLER_USAGE in an existing home directory so
// inventory sees the misconfigured policy, unless another run holds the
// lock (its journal must not be overwritten) or the home cannot be written.
func recordUsageError(home string) {
	if ok, _ := platform.Privileged(); !ok {
		return
	}
	if fi, err := os.Stat(home); err != nil || !fi.IsDir() {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // try once, do not wait
	l, err := lock.Acquire(ctx, home)
	if err != nil {
		return
	}
	defer l.Release()
	s := record.NewSummary(codes.Must(codes.InstallerUsage))
	s.Source = "installer"
	s.InstallerVersion = version
	s.ResultFile = "absent"
	_ = record.Write(filepath.Join(home, record.FileName), record.New(s, time.Now()))
}
