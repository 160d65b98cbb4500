package main

import (
	"context"
	"path/filepath"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/install"
	"github.com/Control-D-Inc/ctrld-install/internal/platform"
	"github.com/Control-D-Inc/ctrld-install/internal/profile"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
)

// runVerify checks the installed state now and changes nothing: the
// service definition exists and ctrld status reports the service running.
func runVerify(ctx context.Context, args []string, io stdio) int {
	fs := newFlagSet("ctrld-install verify")
	ctrld := fs.String("ctrld", "", "")
	serviceFile := fs.String("service-file", platform.Current.ServiceFile, "")
	timeout := fs.Duration("timeout", time.Minute, "")
	jsonOut := fs.Bool("json", false, "")
	exitProfile := fs.String("exit-profile", string(profile.Default), "")
	p := report.New(io.out, io.err, nil, jsonRequested(args))
	if code, done := parseFlags(fs, args, p, io, "verify"); done {
		return code
	}
	p = report.New(io.out, io.err, nil, *jsonOut)
	if !profile.Valid(*exitProfile) {
		return failUsage(p, usagef("--exit-profile must be one of default, intune, filewave, jamf"))
	}
	if *timeout <= 0 {
		return failUsage(p, usagef("--timeout must be positive"))
	}
	path := *ctrld
	if path == "" {
		path = platform.DefaultCtrld()
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	s := install.Verify(ctx, install.Config{
		Ctrld:             path,
		ServiceFile:       *serviceFile,
		Timeout:           *timeout,
		InstallerVersion:  version,
		Env:               childEnv(environ()),
		Privileged:        platform.Privileged,
		ServiceRegistered: platform.ServiceRegistered,
	})
	p.Final(s)
	return profile.ExitStatus(profile.Name(*exitProfile), codes.Must(s.Code), false)
}
