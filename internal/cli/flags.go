package cli

import (
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/Control-D-Inc/ctrld-install/internal/install"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/platform"
	"github.com/Control-D-Inc/ctrld-install/internal/profile"
)

// common are the flags install, verify and uninstall share, defined once.
type common struct {
	ctrld, home, serviceFile, logPath string
	exitProfile, minVersion           string
	timeout                           time.Duration
	json                              bool
}

// register defines the shared flags; verify writes nothing, so it has no
// --log (its --home is where a run in progress holds the lock).
func (c *common) register(fs *pflag.FlagSet, d platform.Defaults, timeout time.Duration, writes, withMinVersion bool) {
	fs.StringVar(&c.ctrld, "ctrld", "", "")
	fs.StringVar(&c.home, "home", d.Home, "")
	fs.StringVar(&c.serviceFile, "service-file", d.ServiceFile, "")
	fs.DurationVar(&c.timeout, "timeout", timeout, "")
	fs.BoolVar(&c.json, "json", false, "")
	fs.StringVar(&c.exitProfile, "exit-profile", string(profile.Default), "")
	if writes {
		fs.StringVar(&c.logPath, "log", "", "")
	}
	if withMinVersion {
		fs.StringVar(&c.minVersion, "min-version", "", "")
	}
}

// config validates the shared flags into the parts of a request they set.
func (c *common) config(a *app) (install.Config, error) {
	var cfg install.Config
	if c.timeout < install.MinTimeout {
		return cfg, Usagef("--timeout must be at least %s", install.MinTimeout)
	}
	if !profile.Valid(c.exitProfile) {
		return cfg, Usagef("--exit-profile must be one of default, intune, filewave, jamf")
	}
	if c.minVersion != "" {
		v, err := parse.ParseVersionLoose(c.minVersion)
		if err != nil {
			return cfg, Usagef("--min-version needs a version such as 1.5.0")
		}
		cfg.MinVersion = v
	}
	cfg.Home = c.home
	cfg.ServiceFile = c.serviceFile
	cfg.Timeout = c.timeout
	cfg.Settle = install.SettleWindow
	cfg.Ctrld = c.ctrld
	if cfg.Ctrld == "" {
		cfg.Ctrld = a.defaults.CtrldPath()
	}
	// Never a PATH lookup: a relative name is taken from the working directory.
	if abs, err := filepath.Abs(cfg.Ctrld); err == nil {
		cfg.Ctrld = abs
	}
	cfg.InstallerVersion = a.build.Version
	cfg.Env = childEnv(os.Environ())
	return cfg, nil
}

func (c *common) profile() profile.Name { return profile.Name(c.exitProfile) }

type installFlags struct {
	common
	src         Sources
	resultFile  string
	serviceLogs []string
	retries     int
	force       bool
	dryRun      bool
	simulate    string
}

func (f *installFlags) register(fs *pflag.FlagSet, d platform.Defaults) {
	fs.StringVar(&f.src.Token, "token", "", "")
	fs.StringVar(&f.src.TokenFile, "token-file", "", "")
	fs.BoolVar(&f.src.TokenStdin, "token-stdin", false, "")
	fs.StringVar(&f.src.Resolver, "resolver", "", "")
	fs.StringVar(&f.src.ResolverFile, "resolver-file", "", "")
	fs.BoolVar(&f.src.ResolverStdin, "resolver-stdin", false, "")
	f.common.register(fs, d, 5*time.Minute, true, true)
	fs.StringVar(&f.resultFile, "result-file", "", "")
	// Repeatable, one path each time: a path may hold a comma.
	fs.StringArrayVar(&f.serviceLogs, "service-log", d.ServiceLogs, "")
	fs.IntVar(&f.retries, "retries", 2, "")
	fs.BoolVar(&f.force, "force", false, "")
	fs.BoolVar(&f.dryRun, "dry-run", false, "")
	fs.StringVar(&f.simulate, "simulate", "", "")
}

type uninstallFlags struct {
	common
	pin     PINSource
	cleanup bool
}

func (f *uninstallFlags) register(fs *pflag.FlagSet, d platform.Defaults) {
	f.common.register(fs, d, 2*time.Minute, true, false)
	fs.StringVar(&f.pin.File, "pin-file", "", "")
	fs.BoolVar(&f.pin.Stdin, "pin-stdin", false, "")
	fs.BoolVar(&f.cleanup, "cleanup", false, "")
}

type verifyFlags struct{ common }

func (f *verifyFlags) register(fs *pflag.FlagSet, d platform.Defaults) {
	f.common.register(fs, d, time.Minute, false, true)
}
