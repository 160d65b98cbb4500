package listener

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestListenerAddrCapture(t *testing.T) {
	// The file as ctrld 1.5.0 wrote it, with the capture's "###" heading.
	b, err := os.ReadFile(filepath.Join("testdata", "listener", "ctrld-1.5.0-toml-cd.txt"))
	if err != nil {
		t.Fatal(err)
	}
	addr, state := Addr(b)
	if addr != "127.0.0.1:53" || state != Found {
		t.Errorf("Addr = %q, %v, want %q, %v", addr, state, "127.0.0.1:53", Found)
	}
}

func TestListenerAddr(t *testing.T) {
	const (
		found   = Found
		def     = Default
		unknown = Unknown
	)
	// A policy and the other tables, as ctrld writes them, around whatever
	// a case puts first.
	const rest = "\n[network]\n  [network.0]\n    name = 'Network 0'\n    cidrs = ['0.0.0.0/0']\n" +
		"[upstream.0]\n  type = 'doh'\n  endpoint = 'https://example.test/x'\n  timeout = 5000\n"
	long := "# " + strings.Repeat("x", 70000) + "\n"
	tests := []struct {
		name, toml string
		want       string
		state      State
	}{
		{"standard tables", "[listener]\n  [listener.0]\n    ip = '127.0.0.1'\n    port = 53\n" + rest, "127.0.0.1:53", found},
		{"flat", "[listener.0]\nip = '127.0.0.1'\nport = 53\n", "127.0.0.1:53", found},
		{"basic strings, tabs", "[listener]\n\t[listener.0]\n\t\tip = \"10.0.0.1\"\n\t\tport = 5353\n", "10.0.0.1:5353", found},
		{"escapes in a basic string", "[listener.0]\nip = \"127.0.0.\\u0031\"\nport = 53\n", "127.0.0.1:53", found},
		{"multi-line literal string", "[listener.0]\nip = '''127.0.0.1'''\nport = 53\n", "127.0.0.1:53", found},
		{"inline tables", "listener = { 0 = { ip = '127.0.0.1', port = 53 } }\n" + rest, "127.0.0.1:53", found},
		{"inline table in a table", "[listener]\n0 = { ip = '127.0.0.3', port = 53 }\n", "127.0.0.3:53", found},
		{"dotted keys", "listener.0.ip = '127.0.0.1'\nlistener.0.port = 53\n" + rest, "127.0.0.1:53", found},
		{"dotted keys in the table", "[listener]\n0.ip = '127.0.0.1'\n0.port = 5300\n", "127.0.0.1:5300", found},
		{"quoted keys", "[listener.\"0\"]\n\"ip\" = '127.0.0.1'\n'port' = 53\n", "127.0.0.1:53", found},
		{"quoted dotted keys", "'listener'.\"0\".ip = '127.0.0.1'\nlistener.'0'.port = 53\n", "127.0.0.1:53", found},
		{"comments", "# head\n[listener.0] # first\n  port = 53 # dns\n  ip = '127.0.0.2' # 'not this'\n", "127.0.0.2:53", found},
		{"a hash inside the string", "[listener.0]\nip = '127.0.0.1' # ip = '10.0.0.1'\nport = 53\n", "127.0.0.1:53", found},
		{"CRLF", "[listener.0]\r\nip = '127.0.0.1'\r\nport = 53\r\n", "127.0.0.1:53", found},
		{"long lines", long + "[listener.0]\nip = '127.0.0.1'\nport = 53 " + long, "127.0.0.1:53", found},
		{"IPv6", "[listener.0]\nip = '::1'\nport = 53\n", "[::1]:53", found},
		{"IPv6 normalised", "[listener.0]\nip = '0:0::1'\nport = 53\n", "[::1]:53", found},
		{"keys in upper case", "[Listener.0]\nIP = '127.0.0.1'\nPort = 53\n", "127.0.0.1:53", found},
		{"the lowest number first", "[listener.10]\nip = '10.9.9.9'\nport = 1\n[listener.2]\nip = '127.0.0.1'\nport = 53\n", "127.0.0.1:53", found},
		{"names that are not numbers skipped", "[listener.a]\nip = '10.9.9.9'\nport = 1\n[listener.1]\nip = '127.0.0.1'\nport = 53\n", "127.0.0.1:53", found},
		{"a sub-table between the keys", "[listener.0]\nip = '127.0.0.1'\npolicy.name = 'p'\nport = 53\n", "127.0.0.1:53", found},
		{"the port inside a sub-table", "[listener.0]\nip = '127.0.0.1'\n[listener.0.policy]\nport = 53\n", "", unknown},
		{"sub-table before the keys", "[listener.0.policy]\nname = 'p'\n[listener.0]\nip = '127.0.0.1'\nport = 53\n", "127.0.0.1:53", found},
		{"everything: 0.0.0.0", "[listener.0]\nip = '0.0.0.0'\nport = 53\n", "127.0.0.1:53", found},
		{"everything: ::", "[listener.0]\nip = '::'\nport = 5353\n", "[::1]:5353", found},
		{"everything: IPv4-mapped", "[listener.0]\nip = '::ffff:0.0.0.0'\nport = 53\n", "127.0.0.1:53", found},
		{"port a string", "[listener.0]\nip = '127.0.0.1'\nport = '53'\n", "127.0.0.1:53", found},
		{"port a hex string", "[listener.0]\nip = '127.0.0.1'\nport = '0x35'\n", "127.0.0.1:53", found},
		{"port hex", "[listener.0]\nip = '127.0.0.1'\nport = 0x35\n", "127.0.0.1:53", found},
		{"port with underscores", "[listener.0]\nip = '127.0.0.1'\nport = 5_353\n", "127.0.0.1:5353", found},
		{"port a whole float", "[listener.0]\nip = '127.0.0.1'\nport = 53.0\n", "127.0.0.1:53", found},

		{"no listener", "[upstream.0]\nip = '127.0.0.1'\nport = 53\n", defaultListener, def},
		{"empty file", "", defaultListener, def},
		{"only comments", "# [listener.0]\n", defaultListener, def},

		{"empty listener table", "[listener]\n" + rest, "", unknown},
		{"listener not a table", "listener = 53\n", "", unknown},
		{"array of tables", "[[listener]]\nip = '127.0.0.1'\nport = 53\n", "", unknown},
		{"listener 0 an array of tables", "[[listener.0]]\nip = '127.0.0.1'\nport = 53\n", "", unknown},
		{"no numbered listener", "[listener.main]\nip = '127.0.0.1'\nport = 53\n", "", unknown},
		{"00 is not 0", "[listener.00]\nip = '127.0.0.1'\nport = 53\n", "", unknown},
		{"keys twice, in two cases", "[listener.0]\nip = '127.0.0.1'\nIP = '10.0.0.1'\nport = 53\n", "", unknown},
		{"tables twice, in two cases", "[listener.0]\nip = '127.0.0.1'\nport = 53\n[LISTENER.1]\n", "", unknown},
		{"no port", "[listener.0]\nip = '127.0.0.1'\n", "", unknown},
		{"no ip", "[listener.0]\nport = 53\n", "", unknown},
		{"empty ip", "[listener.0]\nip = ''\nport = 53\n", "", unknown},
		{"ip a number", "[listener.0]\nip = 2130706433\nport = 53\n", "", unknown},
		{"a name, not an IP", "[listener.0]\nip = 'localhost'\nport = 53\n", "", unknown},
		{"IPv6 with a zone", "[listener.0]\nip = 'fe80::1%eth0'\nport = 53\n", "", unknown},
		{"spaces around the ip", "[listener.0]\nip = ' 127.0.0.1'\nport = 53\n", "", unknown},
		{"port zero", "[listener.0]\nip = '127.0.0.1'\nport = 0\n", "", unknown},
		{"port empty string", "[listener.0]\nip = '127.0.0.1'\nport = ''\n", "", unknown},
		{"port out of range", "[listener.0]\nip = '127.0.0.1'\nport = 65536\n", "", unknown},
		{"port negative", "[listener.0]\nip = '127.0.0.1'\nport = -53\n", "", unknown},
		{"port a fraction", "[listener.0]\nip = '127.0.0.1'\nport = 53.5\n", "", unknown},
		{"port nan", "[listener.0]\nip = '127.0.0.1'\nport = nan\n", "", unknown},
		{"port a word", "[listener.0]\nip = '127.0.0.1'\nport = 'dns'\n", "", unknown},
		{"port a boolean", "[listener.0]\nip = '127.0.0.1'\nport = true\n", "", unknown},
		{"bare ip: not TOML", "[listener.0]\nip = 127.0.0.1\nport = 53\n", "", unknown},
		{"unterminated quote", "[listener.0]\nip = '127.0.0.1\nport = 53\n", "", unknown},
		{"a table defined twice", "[listener.0]\nip = '127.0.0.1'\n[listener.0]\nport = 53\n", "", unknown},
		{"a key defined twice", "[listener.0]\nip = '127.0.0.1'\nip = '10.0.0.1'\nport = 53\n", "", unknown},
		{"a broken table after it", "[listener.0]\nip = '127.0.0.1'\nport = 53\n[upstream\n", "", unknown},
		{"not UTF-8", "[listener.0]\nip = '127.0.0.1'\nport = 53\nname = '\xff'\n", "", unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, state := Addr([]byte(tt.toml))
			if addr != tt.want || state != tt.state {
				t.Errorf("Addr(%.200q) = %q, %v, want %q, %v", tt.toml, addr, state, tt.want, tt.state)
			}
		})
	}
}

func TestListenerAddrTooLong(t *testing.T) {
	valid := "[listener.0]\nip = '127.0.0.1'\nport = 53\n"
	pad := func(n int) []byte {
		return []byte(valid + "#" + strings.Repeat("x", n-len(valid)-2) + "\n")
	}
	if addr, state := Addr(pad(MaxSize)); state != Found {
		t.Errorf("Addr of %d bytes = %q, %v, want %v", MaxSize, addr, state, Found)
	}
	if addr, state := Addr(pad(MaxSize + 1)); addr != "" || state != Unknown {
		t.Errorf("Addr of %d bytes = %q, %v, want \"\", %v", MaxSize+1, addr, state, Unknown)
	}
}

func FuzzListenerAddr(f *testing.F) {
	f.Add([]byte("[listener]\n  [listener.0]\n    ip = '127.0.0.1'\n    port = 53\n"))
	f.Add([]byte("listener = { 0 = { ip = '::', port = '0x35' } }"))
	f.Add([]byte("listener.0.ip = \"0.0.0.0\"\r\nlistener.0.port = 53.0\r\n"))
	f.Add([]byte("[[listener]]\n[listener.00]\nIP = 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		addr, state := Addr(b)
		switch state {
		case Found:
			host, _, err := net.SplitHostPort(addr)
			if err != nil || net.ParseIP(host) == nil || net.ParseIP(host).IsUnspecified() {
				t.Errorf("Addr(%q) = %q, found, not an address to ask", b, addr)
			}
		case Default:
			if addr != defaultListener {
				t.Errorf("Addr(%q) = %q, default, want %q", b, addr, defaultListener)
			}
		case Unknown:
			if addr != "" {
				t.Errorf("Addr(%q) = %q, unknown, want \"\"", b, addr)
			}
		default:
			t.Errorf("Addr(%q): state %d", b, state)
		}
	})
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
