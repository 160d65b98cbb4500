package parse

import (
	"os"
	"path/filepath"
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
		if got := d.Flags(nil); got != SameYes {
			t.Errorf("%s: no extra flags: %v", v, got)
		}
		if got := d.Flags([]string{"--intercept-mode=dns"}); got != SameNo {
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
	for _, tc := range []struct {
		extra []string
		want  Same
	}{
		{[]string{"--intercept-mode=dns"}, SameYes},
		// ctrld leaves these out of the definition: they cannot differ there.
		{[]string{"--intercept-mode=dns", "--custom-hostname", "mac-17"}, SameYes},
		{[]string{"--custom-hostname=mac-17", "--intercept-mode=dns"}, SameYes},
		{nil, SameNo},
		{[]string{"--intercept-mode=off"}, SameNo},
		{[]string{"--intercept-mode=dns", "--iface=en0"}, SameNo},
	} {
		if got := d.Flags(tc.extra); got != tc.want {
			t.Errorf("Flags(%q) = %v, want %v", tc.extra, got, tc.want)
		}
	}
	// A token resolves to a resolver, which ctrld writes as --cd=ID.
	d = script(`/opt/ctrld "run" "--iface=en0" "--homedir=/etc/controld" "--cd=R2" "--config=/etc/controld/ctrld.toml"`)
	if d.Resolver("R2") != SameYes || d.Resolver("R1") != SameNo {
		t.Error("--cd=ID not read")
	}
	if got := d.Flags([]string{"--iface=en0"}); got != SameYes {
		t.Errorf("a user's --iface: %v", got)
	}
	if got := d.Flags(nil); got != SameNo {
		t.Errorf("a user's --iface not requested: %v", got)
	}
}

func TestSystemdAndPlistDefinitions(t *testing.T) {
	unit := "[Unit]\nDescription=Control-D Helper Service\n[Service]\nExecStart=/usr/local/bin/ctrld \"run\" \"--cd\" \"R1\" \"--iface=auto\" \"--homedir=/etc/controld\" \"--config=/etc/controld/ctrld.toml\"\nRestart=always\n"
	d, err := ServiceDefinition(strings.NewReader(unit), "ctrld.service")
	if err != nil || d.Binary() != "/usr/local/bin/ctrld" || d.Resolver("R1") != SameYes || d.Flags(nil) != SameYes || d.PIDFile != "" {
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
	if err != nil || d.Binary() != "/usr/local/bin/ctrld" || d.Resolver("R1") != SameYes || d.Flags([]string{"--intercept-mode=dns"}) != SameYes {
		t.Errorf("plist: %v %q", err, d.Binary())
	}
	d, err = WindowsDefinition(`"C:\ControlD\ctrld.exe" run --cd R1 --iface=auto "--homedir=C:\ControlD" --config=C:\ControlD\ctrld.toml`)
	if err != nil || d.Binary() != `C:\ControlD\ctrld.exe` || d.Resolver("R1") != SameYes || d.Flags(nil) != SameYes {
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
	if d.Resolver("R") != SameUnknown || d.Flags(nil) != SameUnknown {
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
		for _, s := range []Same{d.Resolver(resolver), d.Flags([]string{flag}), d.Flags(nil)} {
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
