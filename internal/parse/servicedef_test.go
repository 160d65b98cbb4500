package parse

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func definitionOf(t *testing.T, path, name string) Definition {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := ServiceDefinition(f, name)
	if err != nil {
		t.Fatalf("ServiceDefinition(%s): %v", path, err)
	}
	return d
}

// What ctrld 1.5.0 and 1.2.1 wrote for `ctrld start --cd <RESOLVER>`.
func TestInitScriptCaptures(t *testing.T) {
	for _, v := range []string{"1.5.0", "1.2.1"} {
		d := definitionOf(t, filepath.Join("testdata", "servicedef", "ctrld-"+v+"-initscript.txt"), "ctrld")
		if d.Binary() != "/usr/local/bin/ctrld" {
			t.Errorf("%s: binary %q", v, d.Binary())
		}
		if d.PIDFile != "/var/run/ctrld.pid" {
			t.Errorf("%s: pid file %q", v, d.PIDFile)
		}
		if got := d.Resolver("<RESOLVER>"); got != SameYes {
			t.Errorf("%s: the resolver it was provisioned with: %v", v, got)
		}
		if got := d.Resolver("OTHER"); got != SameNo {
			t.Errorf("%s: another resolver: %v", v, got)
		}
		if got := d.Flags(nil, false); got != SameYes {
			t.Errorf("%s: no extra flags: %v", v, got)
		}
		if got := d.Flags([]string{"--intercept-mode=dns"}, false); got != SameNo {
			t.Errorf("%s: an extra flag it does not have: %v", v, got)
		}
	}
}

func TestDefinitionFlags(t *testing.T) {
	script := func(cmd string) Definition {
		d, err := ServiceDefinition(strings.NewReader("#!/bin/sh\ncmd=\""+cmd+"\"\npid_file=\"/run/x/$name.pid\"\n"), "svc")
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := script(`/opt/ctrld "run" "--cd" "R1" "--intercept-mode=dns" "--iface=auto" "--homedir=/etc/controld" "--config=/etc/controld/ctrld.toml"`)
	if d.PIDFile != "/run/x/svc.pid" {
		t.Errorf("pid file %q", d.PIDFile)
	}
	// A token resolves to a resolver, which ctrld writes as --cd=ID.
	d = script(`/opt/ctrld "run" "--iface=en0" "--homedir=/etc/controld" "--cd=R2" "--config=/etc/controld/ctrld.toml"`)
	if d.Resolver("R2") != SameYes || d.Resolver("R1") != SameNo {
		t.Error("--cd=ID not read")
	}
}

// What ctrld 1.5.0 writes after `run` for `ctrld start --cd R1 EXTRA...`
// or, with a token, `ctrld start --cd-org T EXTRA...` (commands.go: the
// user's flags copied in order, --iface=auto when none was given,
// --homedir, --cd=ID for a token, --config unless one was given;
// --cd-org and --custom-hostname removed for a token only), against the
// flags a later run asks for.
func TestDefinitionFlagsTable(t *testing.T) {
	const home, conf = "--homedir=/etc/controld", "--config=/etc/controld/ctrld.toml"
	for _, tc := range []struct {
		name    string
		service []string // after run
		extra   []string
		byToken bool
		want    Same
	}{
		{"no extra flags", []string{"--cd", "R1", "--iface=auto", home, conf}, nil, false, SameYes},
		{"an extra flag the service lacks", []string{"--cd", "R1", "--iface=auto", home, conf}, []string{"--intercept-mode=dns"}, false, SameNo},
		{"the same extra flag", []string{"--cd", "R1", "--intercept-mode=dns", "--iface=auto", home, conf}, []string{"--intercept-mode=dns"}, false, SameYes},
		{"an extra flag no longer asked for", []string{"--cd", "R1", "--intercept-mode=dns", "--iface=auto", home, conf}, nil, false, SameNo},
		{"an extra flag's value changed", []string{"--cd", "R1", "--intercept-mode=dns", "--iface=auto", home, conf}, []string{"--intercept-mode=off"}, false, SameNo},
		{"the extra flags in another order", []string{"--cd", "R1", "--rfc1918", "--intercept-mode=dns", "--iface=auto", home, conf}, []string{"--intercept-mode=dns", "--rfc1918"}, false, SameNo},

		// The admin's --config: ctrld adds none of its own, and the
		// admin's is compared.
		{"--config PATH after --", []string{"--cd", "R1", "--config", "/opt/c.toml", "--iface=auto", home}, []string{"--config", "/opt/c.toml"}, false, SameYes},
		{"--config=PATH after --", []string{"--cd", "R1", "--config=/opt/c.toml", "--iface=auto", home}, []string{"--config=/opt/c.toml"}, false, SameYes},
		{"--config=PATH after -- with a token", []string{"--config=/opt/c.toml", "--iface=auto", home, "--cd=R2"}, []string{"--config=/opt/c.toml"}, true, SameYes},
		{"-c PATH after --", []string{"--cd", "R1", "-c", "/opt/c.toml", "--iface=auto", home}, []string{"-c", "/opt/c.toml"}, false, SameYes},
		{"-vc PATH after --", []string{"--cd", "R1", "-vc", "/opt/c.toml", "--iface=auto", home}, []string{"-vc", "/opt/c.toml"}, false, SameYes},
		{"another --config", []string{"--cd", "R1", "--config", "/opt/c.toml", "--iface=auto", home}, []string{"--config", "/opt/d.toml"}, false, SameNo},
		{"--config no longer asked for", []string{"--cd", "R1", "--config", "/opt/c.toml", "--iface=auto", home}, nil, false, SameNo},
		{"--config newly asked for", []string{"--cd", "R1", "--iface=auto", home, conf}, []string{"--config=/opt/c.toml"}, false, SameNo},
		{"--config of the default path, given by the admin", []string{"--cd", "R1", conf, "--iface=auto", home}, []string{conf}, false, SameYes},
		{"--config of the default path, no longer given", []string{"--cd", "R1", conf, "--iface=auto", home}, nil, false, SameNo},
		{"--config of the default path, newly given", []string{"--cd", "R1", "--iface=auto", home, conf}, []string{conf}, false, SameNo},
		{"-s alone is no config", []string{"--cd", "R1", "-s", "--iface=auto", home, conf}, []string{"-s"}, false, SameYes},

		// The admin's --homedir: only `ctrld run` knows it, so ctrld start
		// refuses it; it is compared, and ctrld's own is not the admin's.
		{"--homedir after --", []string{"--cd", "R1", "--iface=auto", home, conf}, []string{home}, false, SameNo},

		// --iface: ctrld adds --iface=auto only when none was given.
		{"the admin's --iface", []string{"--cd", "R1", "--iface=en0", home, conf}, []string{"--iface=en0"}, false, SameYes},
		{"the admin's --iface no longer asked for", []string{"--cd", "R1", "--iface=en0", home, conf}, nil, false, SameNo},
		{"the admin's --iface en0 in two words", []string{"--cd", "R1", "--iface", "en0", home, conf}, []string{"--iface", "en0"}, false, SameYes},
		{"the admin's --iface=auto", []string{"--cd", "R1", "--iface=auto", home, conf}, []string{"--iface=auto"}, false, SameYes},

		// What ctrld drops, on the token's path only.
		{"--custom-hostname with a token", []string{"--intercept-mode=dns", "--iface=auto", home, "--cd=R2", conf}, []string{"--intercept-mode=dns", "--custom-hostname", "mac-17"}, true, SameYes},
		{"--custom-hostname= with a token", []string{"--intercept-mode=dns", "--iface=auto", home, "--cd=R2", conf}, []string{"--custom-hostname=mac-17", "--intercept-mode=dns"}, true, SameYes},
		{"--custom-hostname with a resolver stays in", []string{"--cd", "R1", "--custom-hostname", "mac-17", "--iface=auto", home, conf}, []string{"--custom-hostname", "mac-17"}, false, SameYes},
		{"--custom-hostname with a resolver, not in the service", []string{"--cd", "R1", "--iface=auto", home, conf}, []string{"--custom-hostname", "mac-17"}, false, SameNo},
		{"--nextdns is never dropped: ctrld refuses it with --cd", []string{"--cd", "R1", "--iface=auto", home, conf}, []string{"--nextdns", "abc"}, false, SameNo},
		{"empty words", []string{"--cd", "R1", "--intercept-mode=dns", "--iface=auto", home, conf}, []string{"", "--intercept-mode=dns", ""}, false, SameYes},

		// ctrld 1.3.0 appends --cd=ID before --homedir; 1.2.1 has no token.
		{"1.3.0's order with a token", []string{"--iface=auto", "--cd=R2", home, conf}, nil, true, SameYes},
		{"no --homedir (no home directory found)", []string{"--cd", "R1", "--iface=auto", conf}, nil, false, SameYes},
		{"a command line without run", nil, nil, false, SameUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"/usr/local/bin/ctrld"}
			if tc.service != nil {
				args = append(args, "run")
				args = append(args, tc.service...)
			}
			d := Definition{args: args}
			if got := d.Flags(tc.extra, tc.byToken); got != tc.want {
				t.Errorf("Flags(%q, token %v) on %q = %v, want %v", tc.extra, tc.byToken, tc.service, got, tc.want)
			}
		})
	}
}

// Each side loses only what ctrld adds or drops.
func TestRequestedAndServiceFlags(t *testing.T) {
	for _, tc := range []struct {
		extra   []string
		byToken bool
		want    []string
	}{
		{nil, false, nil},
		{[]string{"--config", "/c", "", "--custom-hostname", "h"}, false, []string{"--config", "/c", "--custom-hostname", "h"}},
		{[]string{"--config", "/c", "", "--custom-hostname", "h"}, true, []string{"--config", "/c"}},
		{[]string{"--homedir=/x", "--nextdns=n"}, true, []string{"--homedir=/x", "--nextdns=n"}},
	} {
		if got := RequestedFlags(tc.extra, tc.byToken); !slices.Equal(got, tc.want) {
			t.Errorf("RequestedFlags(%q, %v) = %q, want %q", tc.extra, tc.byToken, got, tc.want)
		}
	}
	for _, tc := range []struct {
		flags, want, out []string
	}{
		{[]string{"--cd", "R", "--iface=auto", "--homedir=/h", "--config=/h/c"}, nil, nil},
		// Only one of each, and only where ctrld appends it.
		{[]string{"--config=/a", "--iface=auto", "--homedir=/h", "--config=/h/c"}, nil, []string{"--config=/a"}},
		{[]string{"--homedir=/h", "--config=/h/c", "--homedir=/h"}, nil, []string{"--homedir=/h", "--config=/h/c"}},
		{[]string{"--iface=auto", "--iface=auto", "--homedir=/h"}, nil, []string{"--iface=auto"}},
		// A config the request names is the admin's, wherever it is.
		{[]string{"--iface=auto", "--homedir=/h", "--config=/a"}, []string{"--config=/a"}, []string{"--iface=auto", "--homedir=/h", "--config=/a"}},
		{[]string{"--iface=auto", "--homedir=/h"}, []string{"--iface=auto"}, []string{"--iface=auto"}},
	} {
		if got := ServiceFlags(tc.flags, tc.want); !slices.Equal(got, tc.out) {
			t.Errorf("ServiceFlags(%q, %q) = %q, want %q", tc.flags, tc.want, got, tc.out)
		}
	}
}

func TestNamesConfig(t *testing.T) {
	for f, want := range map[string]bool{
		"--config": true, "--config=/x": true, "-c": true, "-c/x": true, "-c=/x": true, "-vc": true, "-vvsc/x": true,
		"--configx": false, "--base64_config=x": false, "-v": false, "-s": false, "-x": false, "-vx": false, "-": false, "": false, "c": false, "--c": false,
	} {
		if got := namesConfig(f); got != want {
			t.Errorf("namesConfig(%q) = %v, want %v", f, got, want)
		}
	}
}

func TestSystemdAndPlistDefinitions(t *testing.T) {
	unit := "[Unit]\nDescription=Control-D Helper Service\n[Service]\nExecStart=/usr/local/bin/ctrld \"run\" \"--cd\" \"R1\" \"--iface=auto\" \"--homedir=/etc/controld\" \"--config=/etc/controld/ctrld.toml\"\nRestart=always\n"
	d, err := ServiceDefinition(strings.NewReader(unit), "ctrld.service")
	if err != nil || d.Binary() != "/usr/local/bin/ctrld" || d.Resolver("R1") != SameYes || d.Flags(nil, false) != SameYes || d.PIDFile != "" {
		t.Errorf("unit: %v %q", err, d.Binary())
	}
	plist := `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple Computer//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd" >
<plist version='1.0'>
  <dict>
    <key>Label</key>
    <string>ctrld</string>
    <key>ProgramArguments</key>
    <array>
      <string>/usr/local/bin/ctrld</string>
      <string>run</string>
      <string>--cd</string>
      <string>R1</string>
      <string>--intercept-mode=dns</string>
      <string>--iface=auto</string>
      <string>--homedir=/etc/controld</string>
      <string>--config=/etc/controld/ctrld.toml</string>
    </array>
    <key>WorkingDirectory</key>
    <string>/etc/controld</string>
  </dict>
</plist>`
	d, err = ServiceDefinition(strings.NewReader(plist), "ctrld.plist")
	if err != nil || d.Binary() != "/usr/local/bin/ctrld" || d.Resolver("R1") != SameYes || d.Flags([]string{"--intercept-mode=dns"}, false) != SameYes {
		t.Errorf("plist: %v %q", err, d.Binary())
	}
	d, err = WindowsDefinition(`"C:\ControlD\ctrld.exe" run --cd R1 --iface=auto "--homedir=C:\ControlD" --config=C:\ControlD\ctrld.toml`)
	if err != nil || d.Binary() != `C:\ControlD\ctrld.exe` || d.Resolver("R1") != SameYes || d.Flags(nil, false) != SameYes {
		t.Errorf("windows: %v %q %q", err, d.Binary(), d.args)
	}
}

func TestNotADefinition(t *testing.T) {
	for _, s := range []string{"", "just text\n", "[Service]\nType=simple\n", "<plist><dict></dict></plist>", strings.Repeat("x", MaxServiceDefinition+1)} {
		if _, err := ServiceDefinition(strings.NewReader(s), "ctrld"); err == nil {
			t.Errorf("%.30q: no error", s)
		}
	}
	d, _ := ServiceDefinition(strings.NewReader("cmd=\"/x daemon --cd R\"\n"), "ctrld")
	if d.Resolver("R") != SameUnknown || d.Flags(nil, false) != SameUnknown {
		t.Error("a command line without run compared")
	}
}

// Any text is read without a panic, and a comparison says yes, no or
// cannot tell.
func FuzzServiceDefinition(f *testing.F) {
	for _, v := range []string{"1.5.0", "1.2.1"} {
		b, err := os.ReadFile(filepath.Join("testdata", "servicedef", "ctrld-"+v+"-initscript.txt"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), "R", "--intercept-mode=dns")
	}
	f.Add("ExecStart=/x \"run\" '--cd' R\\ 1\n", "R 1", "")
	f.Add("<plist><array><string>/x</string><string>run</string></array></plist>", "", "--iface")
	f.Fuzz(func(t *testing.T, text, resolver, flag string) {
		d, err := ServiceDefinition(strings.NewReader(text), "ctrld")
		if err != nil {
			return
		}
		for _, s := range []Same{d.Resolver(resolver), d.Flags([]string{flag}, false), d.Flags([]string{flag}, true), d.Flags(nil, false)} {
			if s != SameUnknown && s != SameYes && s != SameNo {
				t.Fatalf("comparison %d", s)
			}
		}
		if d.Binary() == "" {
			t.Fatal("a definition with no binary")
		}
		if w, err := WindowsDefinition(text); err == nil && w.Binary() == "" {
			t.Fatal("a Windows definition with no binary")
		}
	})
}

// What a service was provisioned with comes back as ctrld start would be
// given it: the resolver, and the admin's flags less ctrld's own.
func TestDefinitionProvisioning(t *testing.T) {
	for _, tc := range []struct {
		script   string
		resolver string
		extra    []string
		ok       bool
		config   string
		listen   string
	}{
		{`cmd="/usr/local/bin/ctrld "run" "--cd" "R1" "--iface=auto" "--homedir=/etc/controld" "--config=/etc/controld/ctrld.toml""`, "R1", nil, true, "/etc/controld/ctrld.toml", ""},
		{`cmd="/usr/local/bin/ctrld "run" "--listen" "127.0.0.2:53" "--iface=auto" "--homedir=/etc/controld" "--cd=R2" "--config=/etc/controld/ctrld.toml""`, "R2", []string{"--listen", "127.0.0.2:53"}, true, "/etc/controld/ctrld.toml", "127.0.0.2:53"},
		{`cmd="/usr/local/bin/ctrld "run" "--cd" "R3" "--config=/srv/ctrld.toml" "--iface=auto" "--homedir=/etc/controld""`, "R3", []string{"--config=/srv/ctrld.toml"}, true, "/srv/ctrld.toml", ""},
		{`cmd="/usr/local/bin/ctrld "run" "--iface=auto" "--homedir=/etc/controld" "--config=/etc/controld/ctrld.toml""`, "", nil, false, "/etc/controld/ctrld.toml", ""},
	} {
		d, err := ServiceDefinition(strings.NewReader(tc.script+"\n"), "ctrld")
		if err != nil {
			t.Fatalf("%s: %v", tc.script, err)
		}
		r, extra, ok := d.Provisioning()
		if r != tc.resolver || !slices.Equal(extra, tc.extra) || ok != tc.ok {
			t.Errorf("%s: Provisioning = %q %q %v, want %q %q %v", tc.script, r, extra, ok, tc.resolver, tc.extra, tc.ok)
		}
		if d.Config() != tc.config || d.Listen() != tc.listen {
			t.Errorf("%s: Config %q Listen %q, want %q %q", tc.script, d.Config(), d.Listen(), tc.config, tc.listen)
		}
	}
}
