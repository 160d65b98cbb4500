package parse

import (
	"os"
	"path/filepath"
	"testing"
)

func TestListenerAddrCapture(t *testing.T) {
	// The file as ctrld 1.5.0 wrote it, with the capture's "###" heading.
	b, err := os.ReadFile(filepath.Join("testdata", "listener", "ctrld-1.5.0-toml-cd.txt"))
	if err != nil {
		t.Fatal(err)
	}
	addr, ok := ListenerAddr(b)
	if !ok {
		t.Errorf("ListenerAddr: not ok, want ok")
	}
	if want := "127.0.0.1:53"; addr != want {
		t.Errorf("ListenerAddr = %q, want %q", addr, want)
	}
}

func TestListenerAddr(t *testing.T) {
	tests := []struct {
		name, toml, want string
	}{
		{"flat", "[listener.0]\nip = '127.0.0.1'\nport = 53\n", "127.0.0.1:53"},
		{"double quotes, tabs", "[listener]\n\t[listener.0]\n\t\tip = \"10.0.0.1\"\n\t\tport = 5353\n", "10.0.0.1:5353"},
		{"port first, comments", "[listener.0] # first\n  port = 53 # dns\n  ip = '127.0.0.2' # loopback\n", "127.0.0.2:53"},
		{"IPv6", "[listener.0]\nip = '::1'\nport = 53\n", "[::1]:53"},
		{"IPv6 normalised", "[listener.0]\nip = '0:0::1'\nport = 053\n", "[::1]:53"},
		{"CRLF", "[listener.0]\r\nip = '127.0.0.1'\r\nport = 53\r\n", "127.0.0.1:53"},
		{"spaces in the header", "[ listener.0 ]\nip='127.0.0.1'\nport=53\n", "127.0.0.1:53"},
		{"the first listener only", "[listener.1]\nip = '10.9.9.9'\nport = 1\n[listener.0]\nip = '127.0.0.1'\nport = 53\n", "127.0.0.1:53"},
		{"a sub-table ends it", "[listener.0]\nip = '127.0.0.1'\n[listener.0.policy]\nport = 53\n", ""},
		{"another section's keys", "[upstream.0]\nip = '127.0.0.1'\nport = 53\n", ""},
		{"no section", "ip = '127.0.0.1'\nport = 53\n", ""},
		{"no port", "[listener.0]\nip = '127.0.0.1'\n", ""},
		{"no ip", "[listener.0]\nport = 53\n", ""},
		{"empty ip", "[listener.0]\nip = ''\nport = 53\n", ""},
		{"bare ip", "[listener.0]\nip = 127.0.0.1\nport = 53\n", ""},
		{"unterminated quote", "[listener.0]\nip = '127.0.0.1\nport = 53\n", ""},
		{"a name, not an IP", "[listener.0]\nip = 'localhost'\nport = 53\n", ""},
		{"port out of range", "[listener.0]\nip = '127.0.0.1'\nport = 65536\n", ""},
		{"port zero", "[listener.0]\nip = '127.0.0.1'\nport = 0\n", ""},
		{"quoted port", "[listener.0]\nip = '127.0.0.1'\nport = '53'\n", ""},
		{"array of tables", "[[listener.0]]\nip = '127.0.0.1'\nport = 53\n", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, ok := ListenerAddr([]byte(tt.toml))
			if want := tt.want != ""; ok != want {
				t.Errorf("ListenerAddr(%q) ok = %v, want %v", tt.toml, ok, want)
			}
			if addr != tt.want {
				t.Errorf("ListenerAddr(%q) = %q, want %q", tt.toml, addr, tt.want)
			}
		})
	}
}

func TestListenFlag(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"separate", []string{"run", "--cd", "R", "--listen", "192.0.2.53:53"}, "192.0.2.53:53"},
		{"equals", []string{"run", "--listen=127.0.0.1:5353", "--iface=auto"}, "127.0.0.1:5353"},
		{"IPv6", []string{"--listen", "[::1]:53"}, "[::1]:53"},
		{"the last wins", []string{"--listen", "127.0.0.1:1", "--listen=127.0.0.1:2"}, "127.0.0.1:2"},
		{"none", []string{"run", "--cd=R", "--config=/etc/controld/ctrld.toml"}, ""},
		{"no value", []string{"run", "--listen"}, ""},
		{"empty value", []string{"--listen="}, ""},
		{"no port", []string{"--listen", "127.0.0.1"}, ""},
		{"a name", []string{"--listen", "localhost:53"}, ""},
		{"after --", []string{"run", "--", "--listen", "127.0.0.1:53"}, ""},
		{"a look-alike flag", []string{"--listener", "127.0.0.1:53"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, ok := ListenFlag(tt.args)
			if want := tt.want != ""; ok != want {
				t.Errorf("ListenFlag(%q) ok = %v, want %v", tt.args, ok, want)
			}
			if addr != tt.want {
				t.Errorf("ListenFlag(%q) = %q, want %q", tt.args, addr, tt.want)
			}
		})
	}
}
