//go:build unix

// mkpkg runs on the build machine, Linux or macOS, where its modes are
// checked; Windows has none.

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type files struct{ dir, installer, ctrld, post, upost, token string }

func setup(t *testing.T) files {
	t.Helper()
	d := t.TempDir()
	f := files{dir: d, installer: filepath.Join(d, "ci"), ctrld: filepath.Join(d, "ctrld"),
		post: filepath.Join(d, "post"), upost: filepath.Join(d, "upost"), token: filepath.Join(d, "token")}
	for p, c := range map[string]string{f.installer: "ci", f.ctrld: "ctrld", f.post: "#!/bin/sh\n", f.upost: "#!/bin/sh\nexit 0\n", f.token: "SECRETTOKEN\n"} {
		if err := os.WriteFile(p, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func runMkpkg(env map[string]string, args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb, func(k string) string { return env[k] })
	return out.String(), errb.String(), code
}

// The same input gives the same bytes; a package holding the token is
// its owner's only; SOURCE_DATE_EPOCH changes the time.
func TestWritesReproducibly(t *testing.T) {
	f := setup(t)
	build := func(name string, env map[string]string) []byte {
		t.Helper()
		out := filepath.Join(f.dir, name)
		if stdout, stderr, code := runMkpkg(env, "--ctrld-install", f.installer, "--ctrld", f.ctrld, "--version", "1.0.0",
			"--token-file", f.token, "--postinstall", f.post, "--output", out); code != 0 || stdout != "mkpkg: wrote "+out+"\n" {
			t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
		}
		fi, err := os.Stat(out)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v, want mode 0600", out, fi.Mode())
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b := build("a.pkg", nil), build("b.pkg", nil)
	if !bytes.Equal(a, b) {
		t.Error("two builds differ")
	}
	if c := build("c.pkg", map[string]string{"SOURCE_DATE_EPOCH": "1700000000"}); bytes.Equal(a, c) {
		t.Error("SOURCE_DATE_EPOCH changed nothing")
	}
}

func TestUninstallPackage(t *testing.T) {
	f := setup(t)
	out := filepath.Join(f.dir, "u.pkg")
	if _, stderr, code := runMkpkg(nil, "--uninstall", "--version", "1.0.0", "--postinstall", f.upost, "--output", out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	fi, err := os.Stat(out)
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("%v, want mode 0644", err)
	}
}

// Mistakes end with one line naming the problem, never a value given.
func TestRefusesMistakes(t *testing.T) {
	f := setup(t)
	out := filepath.Join(f.dir, "x.pkg")
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--token", "SECRETVALUE"}, "an unknown or incomplete argument was given"},
		{[]string{"--version", "1", "--output", out}, "--ctrld-install is required"},
		{[]string{"--ctrld-install", f.installer, "--version", "1", "--output", out, "--token-file", f.token, "--resolver-file", f.token}, "exclude each other"},
		{[]string{"--uninstall", "--ctrld-install", f.installer, "--version", "1", "--output", out}, "--uninstall takes only"},
		{[]string{"--ctrld-install", f.installer, "--version", "1", "--output", out, "--payload-only", "--token-file", f.token}, "--payload-only excludes"},
		{[]string{"--ctrld-install", filepath.Join(f.dir, "missing"), "--version", "1", "--output", out}, "the --ctrld-install file does not exist"},
		{[]string{"--ctrld-install", f.installer, "--version", "1", "--output", out, "--token-file", f.token}, "the postinstall script (run mkpkg from the repository's root"},
		{[]string{"--ctrld-install", f.installer, "--version", "1 2", "--output", out, "--payload-only"}, "the version may hold only"},
	} {
		_, stderr, code := runMkpkg(nil, tc.args...)
		if code == 0 || !strings.HasPrefix(stderr, "mkpkg: error: ") || !strings.Contains(stderr, tc.msg) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q, want one line with %q", tc.args, code, stderr, tc.msg)
		}
		if strings.Contains(stderr, "SECRET") {
			t.Errorf("%q: stderr repeats a value: %q", tc.args, stderr)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused run wrote the package")
	}
}
