package parse

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

const esc = "\x1b"

// classifyLines feeds lines to a new classifier and returns its result name,
// "" for not understood.
func classifyLines(t testing.TB, lines ...string) string {
	t.Helper()
	c := NewClassifier()
	for _, l := range lines {
		c.Line([]byte(l))
	}
	return resultName(t, c)
}

func resultName(t testing.TB, c *Classifier) string {
	t.Helper()
	code, ok := c.Result()
	if !ok {
		if code != (codes.Code{}) {
			t.Errorf("Result() = %+v, not understood: a not-understood result carries no code", code)
		}
		return ""
	}
	reg, found := codes.Lookup(code.Name)
	if !found {
		t.Fatalf("Result(): unregistered code %q", code.Name)
	}
	if code != reg {
		t.Errorf("Result() = %+v, want the registered %+v", code, reg)
	}
	if code.IsOK() {
		t.Errorf("Result() = %s: the classifier never reports OK", code.Name)
	}
	return code.Name
}

// catalogueRow is one catalogued message as ctrld v1 prints it.
type catalogueRow struct {
	name string
	lvl  string // v1 level tag; "???" for Write events
	msg  string
	err  string // the error= value, if any
	want string // "" for not understood
	// notUntagged marks rules that apply only to a tagged fatal, so the
	// bare message is expected to be ignored.
	notUntagged bool
	// consequence marks a message that follows a failure reported earlier,
	// which keeps its code.
	consequence bool
}

var catalogueRows = []catalogueRow{
	{name: "not root", lvl: "ERR", msg: "Please relaunch process with admin/root privilege.", want: codes.InstallerNotRoot},
	{name: "pin required", lvl: "ERR", msg: "deactivation pin is required to stop or uninstall the service", want: codes.DeactivationPinRequired},
	// The daemon answered that the PIN is wrong: no error.
	{name: "pin invalid", lvl: "ERR", msg: "deactivation pin is invalid", want: codes.DeactivationPinRequired},
	// No answer from the daemon: the PIN check could not complete.
	{name: "pin check timed out, as 1.5.0 prints it", lvl: "ERR", msg: "deactivation pin is invalid", err: `Post "http://unix/deactivation": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, want: codes.APIUnreachable},
	{name: "pin check cut off", lvl: "ERR", msg: "deactivation pin is invalid", err: `Post "http://unix/deactivation": EOF`, want: codes.APIUnreachable},
	{name: "pin check refused", lvl: "ERR", msg: "deactivation pin is invalid", err: `Post "http://unix/deactivation": dial unix /var/run/ctrld-control.sock: connect: connection refused`, want: codes.APIUnreachable},
	{name: "pin check read timeout", lvl: "ERR", msg: "deactivation pin is invalid", err: `Post "http://unix/deactivation": read unix @->/var/run/ctrld-control.sock: i/o timeout`, want: codes.APIUnreachable},
	{name: "pin check reset", lvl: "ERR", msg: "deactivation pin is invalid", err: `Post "http://unix/deactivation": read unix @->/var/run/ctrld-control.sock: read: connection reset by peer`, want: codes.APIUnreachable},

	{name: "token network", lvl: "FTL", msg: "failed to fetch resolver uid with provision token: tok123", err: `postUtilityAPI client.Do: Post "https://api.controld.com/utility": dial tcp: i/o timeout`, want: codes.APIUnreachable},
	{name: "token rejected", lvl: "FTL", msg: "failed to fetch resolver uid with provision token: tok123", err: "invalid provision token", want: codes.APIRejected},
	{name: "token rejected, network words in the token", lvl: "FTL", msg: "failed to fetch resolver uid with provision token: client.Do-dial-tcp", err: "token expired", want: codes.APIRejected},
	{name: "token without error field", lvl: "FTL", msg: "failed to fetch resolver uid with provision token: tok123", want: codes.APIRejected},
	{name: "token tls, as 1.5.0 prints it", lvl: "FTL", msg: "failed to fetch resolver uid with provision token: tok123", err: `postUtilityAPI client.Do: Post "https://147.185.34.1/utility?platform=ctrld&version=v1.5.0": tls: failed to verify certificate: x509: certificate is valid for 127.0.0.1, not 147.185.34.1`, want: codes.APITLSFailed},
	{name: "token tls, unknown authority", lvl: "FTL", msg: "failed to fetch resolver uid with provision token: tok123", err: `postUtilityAPI client.Do: Post "https://api.controld.com/utility": x509: certificate signed by unknown authority`, want: codes.APITLSFailed},
	{name: "token tls handshake timeout", lvl: "FTL", msg: "failed to fetch resolver uid with provision token: tok123", err: `postUtilityAPI client.Do: Post "https://api.controld.com/utility": net/http: TLS handshake timeout`, want: codes.APIUnreachable},
	{name: "token html", lvl: "FTL", msg: "failed to fetch resolver uid with provision token: tok123", err: "invalid character '<' looking for beginning of value", want: codes.APIResponseInvalid},
	{name: "token wrong json", lvl: "FTL", msg: "failed to fetch resolver uid with provision token: tok123", err: "json: cannot unmarshal array into Go value of type controld.utilityResponse", want: codes.APIResponseInvalid},
	{name: "token cut short", lvl: "FTL", msg: "failed to fetch resolver uid with provision token: tok123", err: "unexpected EOF", want: codes.APIResponseInvalid},
	{name: "token empty body", lvl: "FTL", msg: "failed to fetch resolver uid with provision token: tok123", err: "EOF", want: codes.APIResponseInvalid},
	{name: "token rejected, a token that starts with a colon", lvl: "FTL", msg: "failed to fetch resolver uid with provision token: :client.Do", err: "invalid token", want: codes.APIRejected},
	{name: "token network, a token that is a colon", lvl: "FTL", msg: "failed to fetch resolver uid with provision token: :", err: "dial tcp: i/o timeout", want: codes.APIUnreachable},
	{name: "token rejected, decoder words in the token", lvl: "FTL", msg: "failed to fetch resolver uid with provision token: x509:unexpected-EOF", err: "invalid token", want: codes.APIRejected},
	{name: "token rejected, an invalid character the API names", lvl: "FTL", msg: "failed to fetch resolver uid with provision token: tok123", err: "invalid character in hostname", want: codes.APIRejected},
	{name: "resolver config device text", lvl: "FTL", msg: "failed to fetch resolver config", err: "Device does not exist", want: codes.APIDeviceInvalid},
	{name: "resolver config 40402", lvl: "FTL", msg: "failed to fetch resolver config", err: "40402: not found", want: codes.APIDeviceInvalid},
	{name: "resolver config other", lvl: "FTL", msg: "failed to fetch resolver config", err: "Internal server error", want: codes.BootstrapFailed},
	{name: "resolver config tls", lvl: "FTL", msg: "failed to fetch resolver config", err: `postUtilityAPI client.Do: Post "https://147.185.34.1/utility?platform=ctrld&version=v1.5.0": tls: failed to verify certificate: x509: certificate signed by unknown authority`, want: codes.APITLSFailed},
	{name: "resolver config html", lvl: "FTL", msg: "failed to fetch resolver config", err: "invalid character '<' looking for beginning of value", want: codes.APIResponseInvalid},
	{name: "resolver config cut short", lvl: "FTL", msg: "failed to fetch resolver config", err: "unexpected end of JSON input", want: codes.APIResponseInvalid},
	{name: "resolver config empty body", lvl: "FTL", msg: "failed to fetch resolver config", err: "EOF", want: codes.APIResponseInvalid},
	{name: "resolver uid tls", lvl: "FTL", msg: "failed to fetch resolver uid: abc123", err: `postUtilityAPI client.Do: Post "https://api.controld.com/utility": tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time 2020-01-01T00:00:00Z is before 2025-06-01T00:00:00Z`, want: codes.APITLSFailed},
	{name: "resolver uid html", lvl: "FTL", msg: "failed to fetch resolver uid: abc123", err: "invalid character 'H' looking for beginning of value", want: codes.APIResponseInvalid},
	{name: "resolver config network", lvl: "FTL", msg: "failed to fetch resolver config", err: "dial tcp: lookup api.controld.com: no such host", want: codes.APIUnreachable},
	{name: "resolver uid other", lvl: "FTL", msg: "failed to fetch resolver uid: abc40402", err: "invalid resolver", want: codes.BootstrapFailed},
	{name: "resolver uid device", lvl: "FTL", msg: "failed to fetch resolver uid: abc123", err: "Device does not exist", want: codes.APIDeviceInvalid},
	{name: "resolver uid network", lvl: "FTL", msg: "failed to fetch resolver uid: abc123", err: "connect: connection refused", want: codes.APIUnreachable},
	{name: "network not up", lvl: "FTL", msg: "network is not up yet", want: codes.APIUnreachable},
	{name: "custom hostname", lvl: "FTL", msg: `invalid custom hostname: "bad_host!"`, want: codes.InstallerUsage},
	{name: "router pre-run", lvl: "FTL", msg: "failed to perform router pre-run check", err: "dnsmasq not found", want: codes.BootstrapFailed},
	{name: "device uninstalled", lvl: "WRN", msg: `service was uninstalled because device "abc123" does not exist`, want: codes.APIDeviceInvalid},

	{name: "no listen ip and port", lvl: "FTL", msg: "listener.0 could not find available listen ip and port", want: codes.ListenerBindFailed},
	{name: "failed to listen, in use", lvl: "FTL", msg: "listener.0 failed to listen: listen udp 127.0.0.1:53: bind: address already in use", want: codes.ListenerBindFailed},
	{name: "failed to listen, not here", lvl: "FTL", msg: "listener.1 failed to listen: listen udp 10.9.9.9:53: bind: cannot assign requested address", want: codes.ListenerConfiguredAddrUnavailable},
	{name: "could not listen on", lvl: "FTL", msg: "listener.0 could not listen on 127.0.0.1:53: listen tcp 127.0.0.1:53: bind: address already in use", want: codes.ListenerBindFailed},
	{name: "could not listen on, windows not here", lvl: "FTL", msg: "listener.0 could not listen on 10.9.9.9:53: listen udp 10.9.9.9:53: bind: The requested address is not valid in its context.", want: codes.ListenerConfiguredAddrUnavailable},
	{name: "systemd resolved", lvl: "FTL", msg: `listener.0 could not use "127.0.0.2" as DNS nameserver with systemd resolved`, want: codes.ListenerBindFailed},
	{name: "other listener fatal", lvl: "FTL", msg: "listener.12 something new went wrong", want: codes.ListenerFailed, notUntagged: true},
	{name: "dns proxy", lvl: "FTL", msg: "unable to start dns proxy on listener.0", err: "listen udp 127.0.0.1:53: bind: address already in use", want: codes.ListenerBindFailed},
	{name: "dns proxy, not here", lvl: "FTL", msg: "unable to start dns proxy on listener.0", err: "listen udp 10.9.9.9:53: bind: cannot assign requested address", want: codes.ListenerConfiguredAddrUnavailable},
	{name: "intercept bind", lvl: "FTL", msg: "DNS intercept: cannot bind 127.0.0.1:53 or 127.0.0.1:5354", want: codes.ListenerBindFailed},
	{name: "intercept configured", lvl: "FTL", msg: "DNS intercept: cannot listen on configured address 10.0.0.1:53", want: codes.ListenerConfiguredAddrUnavailable},
	{name: "invalid listener address", lvl: "FTL", msg: "invalid listener address: 127.0.0.1", want: codes.ListenerConfiguredAddrUnavailable},
	{name: "invalid port", lvl: "FTL", msg: `invalid port number: strconv.Atoi: parsing "x": invalid syntax`, want: codes.ListenerConfiguredAddrUnavailable},

	{name: "task install", lvl: "ERR", msg: "error running task Install: Init already exists: /etc/systemd/system/ctrld.service", want: codes.ServiceInstallFailed},
	{name: "task start", lvl: "ERR", msg: "error running task Start: exit status 1", want: codes.ServiceStartFailed},
	{name: "task checking config", lvl: "ERR", msg: "error running task Checking config: invalid config", want: codes.ServiceFailed},
	{name: "start existing", lvl: "ERR", msg: "Failed to start existing ctrld service", err: "exit status 5", want: codes.ServiceStartFailed},
	{name: "socket directory", lvl: "WRN", msg: "Failed to get socket directory", want: codes.ServiceFailed},
	{name: "post installation", lvl: "WRN", msg: "post installation failed, please check system/service log for details error", err: "exit status 1", want: codes.ServiceFailed},
	{name: "configure service", lvl: "FTL", msg: "could not configure service", err: "read-only file system", want: codes.ServiceFailed},
	{name: "new service", lvl: "FTL", msg: "failed create new service", err: "unsupported platform", want: codes.ServiceFailed},
	{name: "router service", lvl: "FTL", msg: "failed to configure service on router", err: "exit status 1", want: codes.ServiceInstallFailed},
	{name: "intercept args", lvl: "FTL", msg: "failed to append intercept flag to service arguments", want: codes.ServiceFailed},
	{name: "may not have started", lvl: "ERR", msg: "ctrld service may not have started due to an error or misconfiguration, service log:", want: codes.ServiceSelfcheckFailed},
	{name: "test query control server", lvl: "???", msg: "An error occurred while performing test query: could not connect to control server", want: codes.ServiceSelfcheckFailed},
	{name: "test query no response", lvl: "???", msg: "An error occurred while performing test query: no response from ctrld listener. You can try to re-launch with flag --skip_self_checks", want: codes.ServiceSelfcheckFailed},
	{name: "query not sent", lvl: "???", msg: "ctrld service was running, but a DNS query could not be sent to its listener", want: codes.ServiceSelfcheckFailed},

	{name: "service did not start", lvl: "ERR", msg: "Service did not start, please check system/service log for details error", want: codes.ServiceStartFailed},

	{name: "empty flag", lvl: "FTL", msg: `flag "--cd" value must be non-empty`, want: codes.InstallerUsage},
	{name: "protocol flag", lvl: "FTL", msg: `flag "--protocol" must be "doh" or "doh3"`, want: codes.InstallerUsage},
	{name: "nextdns conflict", lvl: "FTL", msg: "--cd/--cd-org could not be used with --nextdns", want: codes.InstallerUsage},
	{name: "intercept mode", lvl: "FTL", msg: `invalid --intercept-mode value "x": must be 'off', 'dns', or 'hard'`, want: codes.InstallerUsage},
	{name: "no config mode", lvl: "FTL", msg: `"listen" and "primary_upstream" flags must be set in no config mode`, want: codes.InstallerUsage},

	{name: "default route", lvl: "FTL", msg: "failed to get default route interface", err: "no default route found", consequence: true},
	{name: "unmarshal", lvl: "FTL", msg: "failed to unmarshal config: 1 error(s) decoding", want: codes.ConfigInvalid},
	{name: "decode", lvl: "FTL", msg: "failed to decode config file at line: 3, column: 1, error: expected '='", want: codes.ConfigInvalid},
	{name: "invalid config", lvl: "ERR", msg: "invalid config: upstream.0.type: must be one of doh doh3", want: codes.ConfigInvalid},
	{name: "log path", lvl: "ERR", msg: "failed to create log path: permission denied", want: codes.HostFilesFailed},
	{name: "daemon mode", lvl: "FTL", msg: "cannot run in daemon mode"},
}

// v1Line renders a row as zerolog's console writer does, with or without
// colours.
func (r catalogueRow) v1Line(ts string, colour bool) string {
	if !colour {
		s := ts + " " + r.lvl + " " + r.msg
		if r.err != "" {
			s += " error=" + fmt.Sprintf("%q", r.err)
		}
		return s
	}
	s := esc + "[90m" + ts + esc + "[0m "
	switch r.lvl {
	case "FTL", "ERR":
		s += esc + "[31m" + r.lvl + esc + "[0m " + esc + "[1m" + r.msg + esc + "[0m"
	case "WRN":
		s += esc + "[33m" + r.lvl + esc + "[0m " + esc + "[1m" + r.msg + esc + "[0m"
	default:
		s += r.lvl + " " + r.msg
	}
	if r.err != "" {
		s += " " + esc + "[36merror=" + esc + "[0m" + esc + "[31m" + esc + "[1m" + fmt.Sprintf("%q", r.err) + esc + "[0m" + esc + "[0m"
	}
	return s
}

// upper is the row with its message and error in capitals: matching
// ignores case throughout.
func (r catalogueRow) upper() catalogueRow {
	r.msg, r.err = strings.ToUpper(r.msg), strings.ToUpper(r.err)
	return r
}

// v2Line renders a row as release-branch-v2.0.0's zap console does:
// capitalised message, tab-separated, fields as JSON, warnings as NOTICE.
func (r catalogueRow) v2Line() string {
	msg := strings.ToUpper(r.msg[:1]) + r.msg[1:]
	lvl := map[string]string{"FTL": "FATAL", "ERR": "ERROR", "WRN": "NOTICE"}[r.lvl]
	if r.lvl == "???" {
		return msg // logger.Write: raw bytes, no prefix
	}
	s := "Nov 29 12:30:00.000\t" + lvl + "\t" + msg
	if r.err != "" {
		s += "\t" + fmt.Sprintf(`{"error": %q}`, r.err)
	}
	return s
}

func TestClassifierCatalogue(t *testing.T) {
	const parentTS, daemonTS = "Mar  4 20:56:46.020", "Mar  4 20:56:16.100"
	for _, r := range catalogueRows {
		t.Run(r.name, func(t *testing.T) {
			forms := map[string]string{
				"plain":           r.v1Line(daemonTS, false),
				"ansi":            r.v1Line(daemonTS, true),
				"crlf":            r.v1Line(daemonTS, false) + "\r",
				"ansi crlf":       r.v1Line(daemonTS, true) + "\r\n",
				"replay":          parentTS + " ??? " + r.v1Line(daemonTS, true),
				"nested replay":   parentTS + " ??? " + parentTS + " ??? " + r.v1Line(daemonTS, false),
				"exit marker":     parentTS + " ??? $$EXIT$$" + r.v1Line(daemonTS, true),
				"v2":              r.v2Line(),
				"v2 crlf":         r.v2Line() + "\r",
				"one-digit day":   strings.Replace(r.v1Line(daemonTS, false), "Mar  4", "Mar 4", 1),
				"trailing spaces": r.v1Line(daemonTS, false) + " \t ",
				"single-byte esc": esc + "c" + r.v1Line(daemonTS, false),
				"upper-case":      r.upper().v1Line(daemonTS, true),
			}
			for form, line := range forms {
				if got := classifyLines(t, line); got != r.want {
					t.Errorf("form %s: %q classified %q, want %q", form, line, got, r.want)
				}
			}

			// A chunk can split a daemon line anywhere, leaving the message
			// with no level in front of it.
			wantUntagged := r.want
			if r.notUntagged {
				wantUntagged = ""
			}
			bare := strings.TrimPrefix(r.v1Line("", false), " "+r.lvl+" ")
			untagged := map[string]string{
				"bare continuation": bare,
				"bare replay":       parentTS + " ??? " + bare,
				"bare replay ansi":  esc + "[90m" + parentTS + esc + "[0m ??? " + bare,
			}
			for form, line := range untagged {
				if got := classifyLines(t, line); got != wantUntagged {
					t.Errorf("form %s: %q classified %q, want %q", form, line, got, wantUntagged)
				}
			}
		})
	}
}

// Whatever they say, lines logged below warning level are per-attempt noise
// from a run that may well succeed.
func TestClassifierQuietLevelsNeverDecide(t *testing.T) {
	for _, r := range catalogueRows {
		for _, lvl := range []string{"TRC", "DBG", "INF", "NTC"} {
			q := r
			q.lvl = lvl
			if got := classifyLines(t, q.v1Line("Mar  4 20:56:16.100", false)); got != "" {
				t.Errorf("%s at %s classified %q, want none", r.name, lvl, got)
			}
			if got := classifyLines(t, q.v1Line("Mar  4 20:56:16.100", true)); got != "" {
				t.Errorf("%s at %s, coloured, classified %q, want none", r.name, lvl, got)
			}
		}
		for _, lvl := range []string{"DEBUG", "INFO"} {
			if got := classifyLines(t, "Nov 29 12:30:00.000\t"+lvl+"\t"+r.msg); got != "" {
				t.Errorf("%s at %s classified %q, want none", r.name, lvl, got)
			}
		}
	}
}

// Warning-level lines decide only for the messages ctrld logs as warnings.
func TestClassifierWarningsDecideOnlyWhenCatalogued(t *testing.T) {
	for _, r := range catalogueRows {
		w := r
		w.lvl = "WRN"
		want := ""
		if r.lvl == "WRN" {
			want = r.want
		}
		if got := classifyLines(t, w.v1Line("Mar  4 20:56:16.100", false)); got != want {
			t.Errorf("%s at WRN classified %q, want %q", r.name, got, want)
		}
	}
}

// A config or usage fatal is a cause without a registered code: seen first,
// it must keep the self-check block that follows it from being blamed.
func TestClassifierUnmappedCausesHideConsequences(t *testing.T) {
	for _, r := range catalogueRows {
		if r.want != "" || r.consequence {
			continue
		}
		t.Run(r.name, func(t *testing.T) {
			line := r.v1Line("Mar  4 20:56:16.100", true)
			if got := classifyLines(t,
				"Mar  4 20:56:46.020 ERR ctrld service may not have started due to an error or misconfiguration, service log:",
				"Mar  4 20:56:46.020 ??? "+line,
				"Mar  4 20:56:46.021 ??? An error occurred while performing test query: could not connect to control server",
			); got != "" {
				t.Errorf("replayed inside the self-check block: classified %q, want none", got)
			}
			if got := classifyLines(t, r.msg, "Mar  4 20:56:47.000 ERR error running task Start: exit status 1"); got != "" {
				t.Errorf("before a failed start: classified %q, want none", got)
			}
		})
	}
}

func TestClassifierNetworkErrors(t *testing.T) {
	for _, m := range legacyNetworkErrors {
		// Mixed case: Go error text is lower case, but v2 and wrappers vary.
		text := strings.ToUpper(string(m[:1])) + string(m[1:])
		if got := classifyLines(t,
			`Mar  4 20:56:16.100 FTL failed to fetch resolver uid with provision token: tok error="post: `+text+`"`); got != codes.APIUnreachable {
			t.Errorf("%s: resolver uid fatal classified %q, want %s", text, got, codes.APIUnreachable)
		}
		if got := classifyLines(t,
			`Mar  4 20:56:16.100 FTL failed to fetch resolver config error="`+text+`" mode=cd`); got != codes.APIUnreachable {
			t.Errorf("%s: resolver config fatal classified %q, want %s", text, got, codes.APIUnreachable)
		}
	}
}

func TestClassifierCapturedOutputs(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"v1.5.0-token-network-unreachable.log", codes.APIUnreachable},
		{"v1.5.0-cd-selfcheck-timeout.log", codes.ServiceSelfcheckFailed},
		{"v1.5.0-daemon-bootstrap-replay.log", codes.BootstrapFailed},
		{"v1.5.0-daemon-device-deleted-replay.log", codes.APIDeviceInvalid},
		{"v1.5.5-listener-bind-replay.log", codes.ListenerBindFailed},
		{"v1.x-listener-bind-exit-marker.log", codes.ListenerBindFailed},
		{"v1.5.0-success.log", ""},
		{"v1.5.0-success-reinstall-colour.log", ""},
		{"v1.5.0-deactivation-pin.log", codes.DeactivationPinRequired},
		{"v1.5.0-not-root.log", codes.InstallerNotRoot},
		{"v2.0.0-token-rejected.log", codes.APIRejected},
		{"v2.0.0-daemon-device-deleted-raw-dump.log", codes.APIDeviceInvalid},
		{"v1.5.0-task-start-exit0.log", codes.ServiceStartFailed},
		{"v1.5.0-cobra-unknown-flag.log", ""},
		{"v1.5.0-panic-missing-listener.log", ""},
		{"v1.5.0-invalid-config-replay.log", codes.ConfigInvalid},
		{"v1.5.0-selfcheck-firewall.log", codes.ServiceSelfcheckFailed},
		{"v1.4.9-resolver-uid-no-such-host.log", codes.APIUnreachable},
		{"v1.5.0-windows-token-rejected-crlf.log", codes.APIRejected},
		{"v1.5.0-chunked-replay-network-down.log", codes.APIUnreachable},
	}
	files, err := filepath.Glob(filepath.Join("testdata", "legacy", "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(tests) {
		t.Fatalf("%d captured outputs for %d expectations: every captured output needs an expectation", len(files), len(tests))
	}

	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "legacy", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			c := NewClassifier()
			for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
				c.Line(line)
			}
			if got := resultName(t, c); got != tt.want {
				t.Errorf("Result() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClassifierPrecedence(t *testing.T) {
	const (
		header      = "Mar  4 20:56:46.020 ERR ctrld service may not have started due to an error or misconfiguration, service log:"
		testQuery   = "Mar  4 20:56:46.021 ??? An error occurred while performing test query: could not connect to control server"
		uninstalled = "Mar  4 20:56:47.300 NTC Service uninstalled"
		bindFatal   = "Mar  4 20:56:16.900 FTL listener.0 could not find available listen ip and port"
		apiFatal    = `Mar  4 20:56:16.100 FTL failed to fetch resolver config error="Device does not exist" mode=cd`
		netFatal    = "Mar  4 20:56:16.100 FTL network is not up yet"
		taskStart   = "Mar  4 20:56:15.900 ERR error running task Start: exit status 1"
		taskInstall = "Mar  4 20:56:15.800 ERR error running task Install: exit status 1"
		pin         = "Mar  4 20:56:15.000 ERR deactivation pin is invalid"
		notRoot     = "Mar  4 20:56:15.000 ERR Please relaunch process with admin/root privilege."
		configFatal = `Mar  4 20:56:16.000 FTL failed to unmarshal config: 1 error(s) decoding`
		unknownFTL  = "Mar  4 20:56:16.000 FTL something nobody catalogued"
		unknownERR  = "Mar  4 20:56:16.000 ERR something nobody catalogued"
		upstream    = "Mar  4 20:56:40.000 ERR failed to connect to upstream.0, endpoint: https://dns.controld.com/abc123"
		sequoia     = "Mar  4 20:56:40.000 WRN MacOS 15.0 Sequoia has a bug with the firewall which may prevent ctrld from starting. Disable the MacOS firewall and try again"
		logging     = "Mar  4 20:56:46.020 ??? Mar  4 20:56:16.000 NTC internal logging enabled"
		retrying    = "Mar  4 20:56:46.020 ??? \x1b[90mMar  4 20:56:17.000\x1b[0m \x1b[33mWRN\x1b[0m \x1b[1mcould not fetch resolver using bootstrap DNS, retrying...\x1b[0m"

		oldNetWarn    = `Nov 30 14:38:02.000 WRN could not fetch resolver config error="client.Do: Post \"https://api.controld.com/utility\": dial tcp: lookup api.controld.com: i/o timeout" mode=cd`
		oldAPIWarn    = `Nov 30 14:38:02.000 WRN could not fetch resolver config error="invalid resolver uid" mode=cd`
		oldNotStarted = "Nov 30 14:38:28.000 ERR Service did not start, please check system/service log for details error"
		oldDeviceWarn = `Dec  1 19:12:40.000 WRN could not fetch resolver config error="Device does not exist" mode=cd`
		oldTLSWarn    = `Dec  1 19:12:40.000 WRN could not fetch resolver config error="client.Do: Post \"https://api.controld.com/utility?platform=ctrld&version=v1.2.1-0c99d27\": x509: certificate signed by unknown authority" mode=cd`
		oldHTMLWarn   = `Dec  1 19:12:40.000 WRN could not fetch resolver config error="invalid character '<' looking for beginning of value" mode=cd`
		noAnswer      = "Dec  1 19:12:40.000 ERR no answer from OS resolver"
		oldRoute      = `Nov 30 14:38:28.000 FTL failed to get default route interface error="no default route found"`
	)
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"listener fatal then self-check", []string{bindFatal, testQuery, uninstalled}, codes.ListenerBindFailed},
		{"listener fatal replayed inside the self-check block", []string{header, logging, bindFatal, testQuery, uninstalled}, codes.ListenerBindFailed},
		{"bootstrap fatal replayed inside the self-check block", []string{header, logging, apiFatal, testQuery, uninstalled}, codes.APIDeviceInvalid},
		{"self-check then nothing", []string{header, testQuery, uninstalled}, codes.ServiceSelfcheckFailed},
		{"two causes: bootstrap first", []string{header, netFatal, bindFatal, testQuery}, codes.APIUnreachable},
		{"two causes: listener first", []string{header, bindFatal, netFatal, testQuery}, codes.ListenerBindFailed},
		{"two consequences: first wins", []string{taskInstall, taskStart}, codes.ServiceInstallFailed},
		{"cause after a consequence", []string{taskStart, bindFatal}, codes.ListenerBindFailed},
		{"decisive beats an earlier cause", []string{bindFatal, pin}, codes.DeactivationPinRequired},
		{"first decisive wins", []string{notRoot, pin}, codes.InstallerNotRoot},
		{"nothing after a decisive line counts", []string{pin, bindFatal, notRoot}, codes.DeactivationPinRequired},
		{"a config fatal first hides later causes", []string{configFatal, apiFatal, testQuery}, codes.ConfigInvalid},
		{"mapped cause first wins over a later unmapped one", []string{apiFatal, configFatal}, codes.APIDeviceInvalid},
		{"unknown fatal is a cause", []string{header, unknownFTL, testQuery}, ""},
		{"unknown error is not a cause", []string{header, unknownERR, testQuery}, codes.ServiceSelfcheckFailed},
		{"informational lines never decide", []string{upstream, sequoia, logging, uninstalled}, ""},
		{"informational lines do not displace the self-check", []string{sequoia, upstream, testQuery, uninstalled}, codes.ServiceSelfcheckFailed},
		{"daemon still retrying the API when start gave up", []string{header, retrying, testQuery, uninstalled}, codes.APIUnreachable},
		{"retrying, then a fatal: the fatal is the cause", []string{header, retrying, bindFatal, testQuery}, codes.ListenerBindFailed},
		{"retrying at info level is noise", []string{header, "Mar  4 20:56:16.000 INF could not fetch resolver using bootstrap DNS, retrying...", testQuery}, codes.ServiceSelfcheckFailed},
		{"retrying alone is a warning, not a failure", []string{retrying, uninstalled}, ""},
		{"retrying, then a config fatal", []string{retrying, configFatal}, codes.ConfigInvalid},

		{"1.2: resolver config warning, then the start fails", []string{oldNetWarn, oldNotStarted, oldRoute}, codes.APIUnreachable},
		{"1.2: the warning explains a failure reported before it", []string{oldNotStarted, oldNetWarn}, codes.APIUnreachable},
		{"1.2: resolver config warning alone", []string{oldNetWarn}, ""},
		{"1.2: resolver config warning, then success", []string{oldNetWarn, "Nov 30 14:38:28.000 NTC Service started"}, ""},
		{"1.2: the API's own error explains the failure as the fatal would", []string{oldAPIWarn, oldNotStarted, oldRoute}, codes.BootstrapFailed},
		{"1.2: the device does not exist (capture ctrld-1.2.1-devinvalid)", []string{noAnswer, oldDeviceWarn, oldNotStarted}, codes.APIDeviceInvalid},
		{"1.2: the device does not exist, warning alone", []string{noAnswer, oldDeviceWarn}, ""},
		{"1.2: the device does not exist, then success", []string{oldDeviceWarn, "Nov 30 14:38:28.000 NTC Service started"}, ""},
		{"1.2: the API's certificate does not verify", []string{oldTLSWarn, oldNotStarted, oldRoute}, codes.APITLSFailed},
		{"1.2: the API's address answers HTML", []string{oldHTMLWarn, oldNotStarted}, codes.APIResponseInvalid},
		{"1.2: the first warning explains", []string{oldDeviceWarn, oldNetWarn, oldNotStarted}, codes.APIDeviceInvalid},
		{"1.2: a fatal still wins over the device warning", []string{oldDeviceWarn, bindFatal, oldNotStarted}, codes.ListenerBindFailed},
		{"1.2: the start fails without a warning", []string{oldNotStarted, oldRoute}, codes.ServiceStartFailed},
		{"1.2: the default route alone has no code", []string{oldRoute}, ""},
		{"1.2: a fatal still wins over the warning", []string{oldNetWarn, bindFatal, oldNotStarted}, codes.ListenerBindFailed},
		{"1.2: the warning at info level is noise", []string{strings.Replace(oldNetWarn, "WRN", "INF", 1), oldNotStarted}, codes.ServiceStartFailed},
		{"no output", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classifyLines(t, tt.lines...); got != tt.want {
				t.Errorf("classified %q, want %q", got, tt.want)
			}
		})
	}
}

func TestClassifierLineShapes(t *testing.T) {
	tests := []struct {
		name string
		line string
		want string
	}{
		{"empty", "", ""},
		{"only a timestamp", "Mar  4 20:56:16.100", ""},
		{"timestamp and level", "Mar  4 20:56:16.100 FTL", ""},
		{"replay of nothing", "Mar  4 20:56:16.100 ??? ", ""},
		{"unknown level tag", "Mar  4 20:56:16.100 XYZ listener.0 could not find available listen ip and port", ""},
		{"message inside another message", "Mar  4 20:56:16.100 ERR oops: listener.0 could not find available listen ip and port", ""},
		{"per-attempt listener line at error level", "Mar  4 20:56:16.100 FTL listener.0 could not listen on address: 127.0.0.1:53, pick a random ip+port", ""},
		{"listener without number", "Mar  4 20:56:16.100 FTL listener.x could not find available listen ip and port", ""},
		{"listener fatal with NULs", "Mar  4 20:56:16.100 FTL listener.0 could not find available listen ip and port\x00\x00", codes.ListenerBindFailed},
		{"invalid UTF-8 around", "\xff\xfe", ""},
		{"invalid UTF-8 in the error", "Mar  4 20:56:16.100 FTL failed to fetch resolver config error=\"\xff\xfe\"", codes.BootstrapFailed},
		{"cobra error with a catalogued message", "Error: failed to fetch resolver uid: abc123 device does not exist", codes.APIDeviceInvalid},
		{"cobra usage error", "Error: unknown flag: --x", ""},
		{"cobra error after a logged failure", "Mar  4 20:56:15.900 ERR error running task Start: exit status 1\nError: exit status 1", codes.ServiceStartFailed},
		{"go runtime fatal", "fatal error: concurrent map writes", ""},
		{"indented usage text is not a message", "      --cd string    network is not up yet", ""},
		{"truncated escape at the end", "Mar  4 20:56:16.100 FTL network is not up yet\x1b", codes.APIUnreachable},
		{"escape inside the timestamp", "Mar  4 20:\x1b[1m56:16.100 FTL network is not up yet", codes.APIUnreachable},
		{"double exit marker", "$$EXIT$$$$EXIT$$Mar  4 20:56:16.100 FTL network is not up yet", codes.APIUnreachable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classifyLines(t, strings.Split(tt.line, "\n")...); got != tt.want {
				t.Errorf("%q classified %q, want %q", tt.line, got, tt.want)
			}
		})
	}
}

func TestClassifierLongLines(t *testing.T) {
	fatal := "Mar  4 20:56:16.100 FTL failed to fetch resolver config error=\""
	t.Run("detail beyond the examined length is not seen", func(t *testing.T) {
		line := fatal + strings.Repeat("x", maxLegacyLine) + ` no such host"`
		if got := classifyLines(t, line); got != codes.BootstrapFailed {
			t.Errorf("classified %q, want %s", got, codes.BootstrapFailed)
		}
	})
	t.Run("detail within the examined length", func(t *testing.T) {
		line := fatal + "no such host " + strings.Repeat("\x1b[1mx", maxLegacyLine)
		if got := classifyLines(t, line); got != codes.APIUnreachable {
			t.Errorf("classified %q, want %s", got, codes.APIUnreachable)
		}
	})
	t.Run("many megabytes", func(t *testing.T) {
		c := NewClassifier()
		c.Line(bytes.Repeat([]byte("\x1b[31m"), 1<<20))
		c.Line(bytes.Repeat([]byte{0}, 1<<20))
		c.Line([]byte("Mar  4 20:56:16.900 FTL listener.0 could not find available listen ip and port"))
		if got := resultName(t, c); got != codes.ListenerBindFailed {
			t.Errorf("Result() = %q, want %s", got, codes.ListenerBindFailed)
		}
		if got := cap(c.buf); got > maxLegacyLine {
			t.Errorf("scratch capacity %d, want at most %d", got, maxLegacyLine)
		}
	})
}

// The classifier must not keep input: its state is four enums and a
// scratch buffer that is all zeros between calls.
func TestClassifierCanary(t *testing.T) {
	const token, resolver = "CANARYTOKEN0123456789", "CANARYRESOLVERabc"
	lines := []string{
		esc + "[90mNov 29 12:24:55.000" + esc + "[0m " + esc + "[31mFTL" + esc + "[0m " + esc + "[1mfailed to fetch resolver uid with provision token: " + token + esc + "[0m " + esc + "[36merror=" + esc + "[0m\"invalid provision token\"",
		"Nov 29 12:24:55.000 FTL failed to fetch resolver uid with provision token: " + token + ` error="dial tcp: i/o timeout"`,
		"Nov 29 12:24:55.000 FTL failed to fetch resolver uid: " + resolver + ` error="Device does not exist"`,
		"Nov 29 12:24:55.000 WRN service was uninstalled because device \"" + resolver + "\" does not exist",
		"Nov 29 12:24:55.000 ERR failed to connect to upstream.0, endpoint: https://dns.controld.com/" + resolver,
		"Nov 29 12:24:55.000\tFATAL\tFailed to fetch resolver uid with provision token: " + token + "\t{\"error\": \"x\"}",
		"Nov 29 12:24:55.000 ??? " + esc + "[90m" + resolver + token,
		"Error: " + token,
		"panic: " + resolver,
	}
	c := NewClassifier()
	for _, l := range lines {
		c.Line([]byte(l))
	}
	code, ok := c.Result()
	if !ok {
		t.Fatalf("Result() ok = false, want true")
	}
	if code.Name != codes.APIRejected {
		t.Errorf("Result() = %q, want %s", code.Name, codes.APIRejected)
	}
	for _, secret := range []string{token, resolver, "CANARY"} {
		for _, s := range []string{code.Name, string(code.Stage), code.Scenario, code.NextStep, code.Evidence, code.Since} {
			if strings.Contains(s, secret) {
				t.Errorf("the result's text %q contains %q", s, secret)
			}
		}
		if s := fmt.Sprintf("%+v", c); strings.Contains(s, secret) {
			t.Errorf("%%+v of the classifier contains %q: %s", secret, s)
		}
		if s := fmt.Sprintf("%#v", c); strings.Contains(s, secret) {
			t.Errorf("%%#v of the classifier contains %q: %s", secret, s)
		}
		if s := string(c.buf[:cap(c.buf)]); strings.Contains(s, secret) {
			t.Errorf("the scratch backing array contains %q", secret)
		}
	}
	assertScratchZero(t, c)
}

func assertScratchZero(t testing.TB, c *Classifier) {
	t.Helper()
	if len(c.buf) != 0 {
		t.Errorf("scratch holds %q: it holds no line between calls", c.buf)
	}
	if i := bytes.IndexFunc(c.buf[:cap(c.buf)], func(r rune) bool { return r != 0 }); i != -1 {
		t.Errorf("scratch backing array has a non-zero byte at %d: it is zeroed between calls", i)
	}
}

func TestLegacyCatalogueIsWellFormed(t *testing.T) {
	for i, r := range legacyCatalogue {
		if r.prefix == "" {
			t.Fatalf("legacyCatalogue[%d] has an empty prefix", i)
		}
		if r.prefix != strings.ToLower(r.prefix) {
			t.Errorf("%q is not lower case: prefixes are compared with lower-cased input", r.prefix)
		}
		if r.levels == 0 {
			t.Errorf("%q has no levels", r.prefix)
		}
		if r.tier == 0 {
			t.Errorf("%q has no tier", r.prefix)
		}
		if r.v == vNone && r.refine == nil {
			t.Errorf("%q decides nothing", r.prefix)
		}
		for _, earlier := range legacyCatalogue[:i] {
			if earlier.refine == nil && earlier.levels&r.levels != 0 && strings.HasPrefix(r.prefix, earlier.prefix) {
				t.Errorf("%q is shadowed by the earlier %q", r.prefix, earlier.prefix)
			}
		}
	}
}

// The doc's tables are the reader's copy of the catalogue.
func TestLegacyCatalogueIsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "legacy-output.md"))
	if err != nil {
		t.Fatal(err)
	}
	lower := strings.ToLower(string(doc))
	for _, r := range legacyCatalogue {
		if !strings.Contains(lower, r.prefix) {
			t.Errorf("catalogue prefix %q is not in the doc", r.prefix)
		}
	}
	for list, ms := range map[string][][]byte{"network error": legacyNetworkErrors, "certificate error": legacyTLSErrors, "decoder error": legacyDecodeErrors} {
		for _, m := range ms {
			if !strings.Contains(lower, string(m)) {
				t.Errorf("%s %q is not in the doc", list, m)
			}
		}
	}
}

// verdicts are the verdicts the classifier can give: every one its
// catalogue and refine rules name, and vUnmapped.
func verdicts() []verdict {
	return []verdict{vUnmapped, vBootstrapFailed, vAPIUnreachable, vAPIRejected, vAPIDeviceInvalid, vAPIResponseInvalid, vAPITLSFailed, vConfigInvalid, vHostFilesFailed, vListenerFailed, vListenerBindFailed, vListenerConfiguredAddrUnavailable, vServiceFailed, vServiceInstallFailed, vServiceStartFailed, vServiceSelfcheckFailed, vDeactivationPinRequired, vInstallerNotRoot, vInstallerUsage, vCtrldVersionUnsupported}
}

// Every verdict a catalogue rule names is in verdicts.
func TestVerdictsListed(t *testing.T) {
	for _, r := range legacyCatalogue {
		if r.v != vNone && !slices.Contains(verdicts(), r.v) {
			t.Errorf("the catalogue's verdict %s is not in verdicts()", r.v)
		}
	}
}

func TestClassifierVerdictsAreRegistered(t *testing.T) {
	for _, v := range verdicts() {
		name := v.codeName()
		if v == vUnmapped {
			if name != "" {
				t.Errorf("verdict %s names code %q, want none", v, name)
			}
			continue
		}
		code, ok := codes.Lookup(name)
		if !ok {
			t.Fatalf("verdict %q names no registered code", string(v))
		}
		if code.IsOK() {
			t.Errorf("verdict %s names %s", v, code.Name)
		}
		if got := v.String(); got != name {
			t.Errorf("verdict %s: String() = %q, want %q", v, got, name)
		}
	}
	for _, v := range []verdict{"NOT_A_CODE", verdict(codes.OK)} {
		if v.codeName() != "" || v.String() != "invalid" {
			t.Errorf("%q: codeName %q, String %q", string(v), v.codeName(), v.String())
		}
	}
}

func TestAppendStripANSIMatchesStripANSI(t *testing.T) {
	for _, s := range []string{
		"", "plain", esc, esc + "[", esc + "[31", esc + "[31m", "a" + esc + "[1;2;3mb" + esc + "c" + esc,
		esc + "[90mNov 29" + esc + "[0m " + esc + "[31mFTL" + esc + "[0m", esc + "[ !~x", esc + esc + "[m",
	} {
		if got, want := string(appendStripANSI(nil, []byte(s))), string(StripANSI([]byte(s))); got != want {
			t.Errorf("appendStripANSI(nil, %q) = %q, StripANSI gives %q", s, got, want)
		}
	}
}

func TestClassifierDoesNotAllocate(t *testing.T) {
	lines := benchLines()
	c := NewClassifier()
	for _, l := range lines {
		c.Line(l) // warm the scratch buffer
	}
	allocs := testing.AllocsPerRun(20, func() {
		for _, l := range lines {
			c.Line(l)
		}
	})
	if allocs != 0 {
		t.Errorf("Line allocates %v times for the mix, want 0", allocs)
	}
}

// benchLines is a realistic mix: mostly a verbose daemon's coloured log as
// replayed by the start command, some plain parent lines, v2 lines, the
// self-check block and one fatal.
func benchLines() [][]byte {
	var out [][]byte
	add := func(s string) { out = append(out, []byte(s)) }
	ts := esc + "[90mMar  4 20:56:16.000" + esc + "[0m "
	for i := 0; i < 200; i++ {
		add(ts + "DBG [" + fmt.Sprintf("%06x", i) + "] received query: example.com. A from 127.0.0.1:53412 " + esc + "[36mlistener=" + esc + "[0m0")
		add(ts + esc + "[32mINF" + esc + "[0m " + esc + "[1m[" + fmt.Sprintf("%06x", i) + "] sending query to upstream.0: example.com. A" + esc + "[0m")
		add(ts + "DBG [" + fmt.Sprintf("%06x", i) + "] received response of 93 bytes in 12.3ms " + esc + "[36mrcode=" + esc + "[0mNOERROR")
		add("Mar  4 20:56:46.020 ??? " + ts + esc + "[33mNTC" + esc + "[0m internal logging enabled")
		add("Nov 29 12:31:01.000\tINFO\tProxying query\t{\"domain\": \"example.com.\", \"type\": \"A\"}")
		if i%10 == 0 {
			add(ts + esc + "[31mERR" + esc + "[0m " + esc + "[1mfailed to connect to upstream.0, endpoint: https://dns.controld.com/abc123" + esc + "[0m")
			add("Mar  4 20:56:46.021 ??? An error occurred while performing test query: could not connect to control server")
			add(ts + esc + "[33mWRN" + esc + "[0m " + esc + "[1mcould not fetch resolver using bootstrap DNS, retrying..." + esc + "[0m")
		}
	}
	add(ts + esc + "[31mFTL" + esc + "[0m " + esc + "[1mlistener.0 could not find available listen ip and port" + esc + "[0m")
	return out
}

func BenchmarkClassifier(b *testing.B) {
	lines := benchLines()
	var n int64
	for _, l := range lines {
		n += int64(len(l)) + 1
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		c := NewClassifier()
		for _, l := range lines {
			c.Line(l)
		}
		if _, ok := c.Result(); !ok {
			b.Fatal("the mix ends with a listener fatal")
		}
	}
}

// "deactivation pin is invalid" is the PIN only when the daemon answered:
// with the control client's error it is the API the daemon waited on, in
// zerolog's console (v1) and zap's tab-separated JSON fields (v2) alike.
func TestPinCheckWithoutAnswer(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"Dec  2 01:18:19.000 ERR deactivation pin is invalid", codes.DeactivationPinRequired},
		{`Dec  2 01:18:19.000 ERR deactivation pin is invalid error="Post \"http://unix/deactivation\": EOF"`, codes.APIUnreachable},
		{`Dec  2 01:18:19.000 ERR deactivation pin is invalid error="Post \"http://unix/deactivation\": unexpected EOF"`, codes.APIUnreachable},
		{"Dec  2 01:18:19.000\tERROR\tDeactivation pin is invalid", codes.DeactivationPinRequired},
		{"Dec  2 01:18:19.000\tERROR\tDeactivation pin is invalid\t{\"error\": \"Post \\\"http://unix/deactivation\\\": EOF\"}", codes.APIUnreachable},
		{"Dec  2 01:18:19.000\tERROR\tDeactivation pin is invalid\t{\"error\": \"Post \\\"http://unix/deactivation\\\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)\"}", codes.APIUnreachable},
		{"Dec  2 01:18:19.000 ERR deactivation pin is required to stop or uninstall the service", codes.DeactivationPinRequired},
		// A decisive line ends ctrld: what it printed before does not
		// turn a refusal into the API.
		{"Dec  2 01:18:19.000 FTL network is not up yet\nDec  2 01:18:19.000 ERR deactivation pin is invalid", codes.DeactivationPinRequired},
	} {
		if got := classifyLines(t, strings.Split(tc.line, "\n")...); got != tc.want {
			t.Errorf("%q: Result() = %q, want %q", tc.line, got, tc.want)
		}
	}
}
