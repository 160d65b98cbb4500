// Command mkpkg writes ctrld-install's macOS packages on any operating
// system, byte for byte the same for the same input (internal/flatpkg):
//
//	go run ./internal/tools/mkpkg --ctrld-install dist/ctrld-install_1.5.0_darwin_universal \
//	    --ctrld ctrld --version 1.5.0 --token-file token --output ctrld-acme-1.5.0.pkg
//	go run ./internal/tools/mkpkg --uninstall --version 1.5.0 --output ctrld-uninstall-1.5.0.pkg
//
// The install package lays ctrld-install (and ctrld when given) in
// /usr/local/bin and, unless --payload-only, runs scripts/pkg/postinstall;
// the uninstall package has no payload and runs
// scripts/pkg/uninstall-postinstall.sh. Run it from the repository's root
// or name the scripts with --postinstall. docs/mdm/pkg.md has the whole
// recipe, signing and notarisation included.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/Control-D-Inc/ctrld-install/internal/flatpkg"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, os.Getenv)) }

const me = "mkpkg"

// defaultTime is every entry's time unless --mtime or SOURCE_DATE_EPOCH
// says otherwise: any fixed time keeps two builds identical.
const defaultTime = 946684800 // 2000-01-01T00:00:00Z

type options struct {
	installer, ctrld, version, output   string
	token, resolver, pin, postinstall   string
	identifier, minMacOS, architectures string
	payloadOnly, uninstall              bool
	mtime                               int64
}

func run(args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := pflag.NewFlagSet(me, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o options
	fs.StringVar(&o.installer, "ctrld-install", "", "the ctrld-install binary for macOS (universal)")
	fs.StringVar(&o.ctrld, "ctrld", "", "the ctrld binary for macOS, laid beside ctrld-install")
	fs.StringVar(&o.version, "version", "", "the package version")
	fs.StringVar(&o.output, "output", "", "the package to write")
	fs.StringVar(&o.token, "token-file", "", "put this provisioning token in the package as provision_token (the package becomes a secret)")
	fs.StringVar(&o.resolver, "resolver-file", "", "put this resolver ID in the package as provision_resolver (a secret too)")
	fs.StringVar(&o.pin, "pin-file", "", "with --uninstall: put ctrld's deactivation PIN in the package as deactivation_pin")
	fs.BoolVar(&o.payloadOnly, "payload-only", false, "no scripts: the package only lays the binaries")
	fs.BoolVar(&o.uninstall, "uninstall", false, "a payload-free package that runs ctrld-install uninstall")
	fs.StringVar(&o.postinstall, "postinstall", "", "the postinstall script (default scripts/pkg/postinstall, or scripts/pkg/uninstall-postinstall.sh with --uninstall)")
	fs.StringVar(&o.identifier, "identifier", "", "the package identifier (default com.controld.ctrld, or com.controld.ctrld.uninstall)")
	fs.StringVar(&o.minMacOS, "min-macos", "12.0", "the oldest macOS Installer accepts (Go 1.26 programs need macOS 12)")
	fs.StringVar(&o.architectures, "host-architectures", "x86_64,arm64", "the Distribution's hostArchitectures")
	fs.Int64Var(&o.mtime, "mtime", -1, "every entry's time, in Unix seconds (default $SOURCE_DATE_EPOCH, else 2000-01-01)")
	help := fs.BoolP("help", "h", false, "print this help")
	if err := fs.Parse(args); err != nil {
		// The message names the flag, never a value: a token given by
		// mistake must not reach a build log.
		return usage(stderr, "an unknown or incomplete argument was given; see --help")
	}
	if *help {
		fmt.Fprintf(stdout, "usage: %s [flags]\n\n%s", me, fs.FlagUsages())
		return 0
	}
	if fs.NArg() != 0 {
		return usage(stderr, "mkpkg takes no arguments besides its flags")
	}
	if o.mtime < 0 {
		o.mtime = defaultTime
		if s := getenv("SOURCE_DATE_EPOCH"); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 0 {
				return usage(stderr, "SOURCE_DATE_EPOCH must be a whole number of seconds")
			}
			o.mtime = n
		}
	}
	p, secret, err := o.product()
	if err != nil {
		return usage(stderr, err.Error())
	}
	b, err := p.Bytes()
	if err != nil {
		return fail(stderr, err.Error())
	}
	if err := writeFile(o.output, b, secret); err != nil {
		return fail(stderr, "cannot write the package: "+err.Error())
	}
	fmt.Fprintf(stdout, "%s: wrote %s\n", me, o.output)
	return 0
}

func usage(w io.Writer, msg string) int {
	fmt.Fprintf(w, "%s: error: %s\n", me, msg)
	return 2
}

func fail(w io.Writer, msg string) int {
	fmt.Fprintf(w, "%s: error: %s\n", me, msg)
	return 1
}

// product reads the files the options name; secret says whether the
// package carries a token, a resolver ID or a PIN.
func (o options) product() (flatpkg.Product, bool, error) {
	p := flatpkg.Product{
		Title: "ctrld", Identifier: o.identifier, Version: o.version, MinMacOS: o.minMacOS,
		HostArchitectures: o.architectures, ModTime: time.Unix(o.mtime, 0),
	}
	if o.version == "" || o.output == "" {
		return p, false, errors.New("--version and --output are required")
	}
	secrets := 0
	for _, s := range []string{o.token, o.resolver, o.pin} {
		if s != "" {
			secrets++
		}
	}
	if o.uninstall {
		if o.installer != "" || o.ctrld != "" || o.token != "" || o.resolver != "" || o.payloadOnly {
			return p, false, errors.New("--uninstall takes only --pin-file, --postinstall, --identifier, --min-macos, --version and --output")
		}
		if p.Identifier == "" {
			p.Identifier = "com.controld.ctrld.uninstall"
		}
		p.Title = "Remove ctrld"
		script := o.postinstall
		if script == "" {
			script = filepath.Join("scripts", "pkg", "uninstall-postinstall.sh")
		}
		if err := addScript(&p, script); err != nil {
			return p, false, err
		}
		if o.pin != "" {
			if err := add(&p.Scripts, o.pin, "deactivation_pin", 0o600, "the PIN file"); err != nil {
				return p, false, err
			}
		}
		return p, secrets > 0, nil
	}
	if o.installer == "" {
		return p, false, errors.New("--ctrld-install is required")
	}
	if o.pin != "" {
		return p, false, errors.New("--pin-file goes with --uninstall")
	}
	if o.token != "" && o.resolver != "" {
		return p, false, errors.New("--token-file and --resolver-file exclude each other")
	}
	if o.payloadOnly && (o.token != "" || o.resolver != "" || o.postinstall != "") {
		return p, false, errors.New("--payload-only excludes --token-file, --resolver-file and --postinstall")
	}
	if p.Identifier == "" {
		p.Identifier = "com.controld.ctrld"
	}
	p.Payload = []flatpkg.File{}
	if err := add(&p.Payload, o.installer, "usr/local/bin/ctrld-install", 0o755, "the --ctrld-install file"); err != nil {
		return p, false, err
	}
	if o.ctrld != "" {
		if err := add(&p.Payload, o.ctrld, "usr/local/bin/ctrld", 0o755, "the --ctrld file"); err != nil {
			return p, false, err
		}
	}
	if o.payloadOnly {
		return p, false, nil
	}
	script := o.postinstall
	if script == "" {
		script = filepath.Join("scripts", "pkg", "postinstall")
	}
	if err := addScript(&p, script); err != nil {
		return p, false, err
	}
	switch {
	case o.token != "":
		if err := add(&p.Scripts, o.token, "provision_token", 0o600, "the token file"); err != nil {
			return p, false, err
		}
	case o.resolver != "":
		if err := add(&p.Scripts, o.resolver, "provision_resolver", 0o600, "the resolver file"); err != nil {
			return p, false, err
		}
	}
	return p, secrets > 0, nil
}

func addScript(p *flatpkg.Product, path string) error {
	return add(&p.Scripts, path, "postinstall", 0o755,
		"the postinstall script (run mkpkg from the repository's root or give --postinstall)")
}

// add reads src into files as name. what names the file in an error,
// never its content.
func add(files *[]flatpkg.File, src, name string, mode os.FileMode, what string) error {
	fi, err := os.Stat(src)
	if err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("%s does not exist or is not a regular file", what)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("cannot read %s", what)
	}
	*files = append(*files, flatpkg.File{Path: name, Mode: mode, Data: b})
	return nil
}

// writeFile writes b to path through a temporary file and a rename, so a
// failed run leaves no half-written package; a package holding a secret is
// readable by its owner only.
func writeFile(path string, b []byte, secret bool) error {
	mode := os.FileMode(0o644)
	if secret {
		mode = 0o600
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mkpkg-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
