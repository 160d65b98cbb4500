package parse

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

func serviceLogName(t *testing.T, log string) string {
	t.Helper()
	c, ok := ClassifyServiceLog(strings.NewReader(log))
	if !ok {
		if c != (codes.Code{}) {
			t.Errorf("ClassifyServiceLog: no cause, but a code: %+v", c)
		}
		return ""
	}
	reg, found := codes.Lookup(c.Name)
	if !found {
		t.Errorf("ClassifyServiceLog: code %q is not registered", c.Name)
	}
	if c != reg {
		t.Errorf("ClassifyServiceLog = %+v, want the registered %+v", c, reg)
	}
	if isCatchAll(c) {
		t.Errorf("ClassifyServiceLog: %s is a catch-all", c.Name)
	}
	return c.Name
}

func TestClassifyServiceLog(t *testing.T) {
	const (
		started   = "Nov 30 14:45:24.609 NTC internal logging enabled\n"
		notUp     = "Nov 30 14:46:03.826 FTL network is not up yet\n"
		bind      = "Nov 30 14:46:13.000 FTL listener.0 could not find available listen ip and port\n"
		device    = `Nov 30 14:46:13.000 FTL failed to fetch resolver config error="Device does not exist" mode=cd` + "\n"
		other     = `Nov 30 14:46:13.000 FTL failed to fetch resolver config error="Internal server error" mode=cd` + "\n"
		badCert   = `Nov 30 14:46:13.000 FTL failed to fetch resolver config error="postUtilityAPI client.Do: Post \"https://147.185.34.1/utility?platform=ctrld&version=v1.5.0\": tls: failed to verify certificate: x509: certificate signed by unknown authority" mode=cd` + "\n"
		htmlPage  = `Nov 30 14:46:13.000 FTL failed to fetch resolver config error="invalid character '<' looking for beginning of value" mode=cd` + "\n"
		warnCert  = `Nov 30 14:46:13.000 WRN could not fetch resolver config error="tls: failed to verify certificate: x509: certificate has expired or is not yet valid" mode=cd` + "\n"
		retrying  = "Nov 30 14:46:03.000 WRN could not fetch resolver using bootstrap DNS, retrying...\n"
		badConfig = "Nov 30 14:46:13.000 ERR invalid config: upstream.0.type: must be one of doh doh3\n"
	)
	tests := []struct {
		name, log, want string
	}{
		{"the 1.5.0 capture", started + notUp, codes.APIUnreachable},
		{"coloured", "\x1b[90mNov 30 14:46:03.826\x1b[0m \x1b[31mFTL\x1b[0m \x1b[1mnetwork is not up yet\x1b[0m\n", codes.APIUnreachable},
		{"CRLF and no final newline", strings.ReplaceAll(started+notUp, "\n", "\r\n")[:len(started)+len(notUp)], codes.APIUnreachable},
		{"bind failure", started + bind, codes.ListenerBindFailed},
		{"bind in use, continuation line", "Nov 30 14:35:54.000 FTL listener.0 could not listen on 0.0.0.0:53: listen udp 127.0.0.1:53: bind: address already in use\nlisten tcp 127.0.0.1:53: bind: address already in use\n", codes.ListenerBindFailed},
		{"configured address", "Nov 30 14:46:13.000 FTL unable to start dns proxy on listener.0 error=\"listen udp 10.9.9.9:53: bind: cannot assign requested address\"\n", codes.ListenerConfiguredAddrUnavailable},
		{"device deleted at start-up", device, codes.APIDeviceInvalid},
		{"the API's certificate does not verify", started + badCert, codes.APITLSFailed},
		{"the API's address answers HTML", started + htmlPage, codes.APIResponseInvalid},
		{"coloured HTML answer", "\x1b[90mNov 30 14:46:13.000\x1b[0m \x1b[31mFTL\x1b[0m \x1b[1mfailed to fetch resolver config\x1b[0m \x1b[36merror=\x1b[0m\x1b[31m\x1b[1m\"invalid character '<' looking for beginning of value\"\x1b[0m\x1b[0m \x1b[36mmode=\x1b[0mcd\n", codes.APIResponseInvalid},
		{"json, empty answer", `{"level":"fatal","error":"EOF","mode":"cd","message":"failed to fetch resolver config"}` + "\n", codes.APIResponseInvalid},
		{"json, certificate", `{"level":"fatal","error":"Post \"https://api.controld.com/utility\": tls: failed to verify certificate: x509: certificate is valid for portal.example, not api.controld.com","mode":"cd","message":"failed to fetch resolver config"}` + "\n", codes.APITLSFailed},
		{"the warning before the fatal does not count alone", started + warnCert, ""},
		{"the warning, then its fatal", warnCert + badCert, codes.APITLSFailed},
		{"a TLS failure, then the network down on the next start", badCert + notUp, codes.APIUnreachable},
		{"device deleted at run time", "Nov 30 15:00:00.000 WRN service was uninstalled because device \"" + canaryResolver + "\" does not exist\n", codes.APIDeviceInvalid},
		{"v2", "Nov 29 12:30:00.000\tFATAL\tNetwork is not up yet\n", codes.APIUnreachable},
		{"journal", "Nov 30 14:46:03 host ctrld[4242]: Nov 30 14:46:03.826 FTL network is not up yet\n", codes.APIUnreachable},
		{"journal, coloured", "Nov 30 14:46:03 host ctrld[4242]: \x1b[90mNov 30 14:46:03.826\x1b[0m \x1b[31mFTL\x1b[0m listener.0 could not find available listen ip and port\n", codes.ListenerBindFailed},
		{"json", `{"level":"fatal","time":"2026-03-04T20:56:16Z","message":"network is not up yet"}` + "\n", codes.APIUnreachable},
		{"json with error", `{"level":"fatal","error":"Device does not exist","mode":"cd","message":"failed to fetch resolver config"}` + "\n", codes.APIDeviceInvalid},
		{"json below fatal", `{"level":"info","message":"network is not up yet"}` + "\n", ""},
		{"json, broken", `{"level":"fatal","message":"network is not up yet"` + "\n", ""},

		{"the last exit counts", notUp + started + bind, codes.ListenerBindFailed},
		{"the last exit counts, even unmapped", bind + started + "Nov 30 14:46:23.000 FTL cannot run in daemon mode\n", ""},
		{"an error the daemon exits after", bind + badConfig, codes.ConfigInvalid},
		{"catch-all: not from the log", other, ""},
		{"catch-all after a specific cause", notUp + other, ""},
		{"uncatalogued fatal", "Nov 30 14:46:13.000 FTL something new\n", ""},
		{"a consequence logged as fatal", "Nov 30 14:46:13.000 FTL could not configure service\n", ""},
		{"panic", "panic: missing listener config\n", ""},
		{"retrying never counts", started + retrying + retrying, ""},
		{"retrying after an exit does not erase it", notUp + retrying, codes.APIUnreachable},
		{"quiet lines", "Nov 30 14:46:03.826 INF network is not up yet\nNov 30 14:46:03.826 NTC listener.0 could not find available listen ip and port\n", ""},
		{"untagged text", "network is not up yet\n", ""},
		{"a console line that looks like a journal prefix", bind + "Nov 30 14:46:03 FTL x[1]: network is not up yet\n", ""},
		{"a journal prefix without a process ID", "Nov 30 14:46:03 host ctrld: network is not up yet\n", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := serviceLogName(t, tt.log); got != tt.want {
				t.Errorf("ClassifyServiceLog(%q) = %q, want %q", tt.log, got, tt.want)
			}
		})
	}
}

func TestClassifyServiceLogReaders(t *testing.T) {
	log := "Nov 30 14:45:24.609 NTC internal logging enabled\nNov 30 14:46:03.826 FTL network is not up yet\n"
	for name, r := range map[string]func() (codes.Code, bool){
		"one byte at a time": func() (codes.Code, bool) {
			return ClassifyServiceLog(iotest.OneByteReader(strings.NewReader(log)))
		},
		"error after the data": func() (codes.Code, bool) {
			return ClassifyServiceLog(iotest.TimeoutReader(iotest.OneByteReader(strings.NewReader(log))))
		},
	} {
		c, ok := r()
		if name == "error after the data" {
			// The reader fails on its second read: only the first byte
			// arrived, which says nothing.
			if ok {
				t.Errorf("%s: ClassifyServiceLog ok = true (%s), want false", name, c.Name)
			}
			continue
		}
		if !ok {
			t.Errorf("%s: ClassifyServiceLog ok = false, want true", name)
		}
		if c.Name != codes.APIUnreachable {
			t.Errorf("%s: ClassifyServiceLog = %q, want %s", name, c.Name, codes.APIUnreachable)
		}
	}
}

func TestClassifyServiceLogLongLines(t *testing.T) {
	fatal := "Nov 30 14:46:03.826 FTL network is not up yet"
	long := strings.Repeat("x", 3*maxLegacyLine)
	if got := serviceLogName(t, fatal+" "+long+"\n"); got != codes.APIUnreachable {
		t.Errorf("ClassifyServiceLog(fatal + long text) = %q, want %s", got, codes.APIUnreachable)
	}
	if got := serviceLogName(t, long+"\n"+fatal+"\n"); got != codes.APIUnreachable {
		t.Errorf("ClassifyServiceLog(long line, then fatal) = %q, want %s", got, codes.APIUnreachable)
	}
	if got := serviceLogName(t, fatal+" "+long); got != codes.APIUnreachable {
		t.Errorf("ClassifyServiceLog(fatal + long text, no final newline) = %q, want %s", got, codes.APIUnreachable)
	}
	if got := serviceLogName(t, fatal+"\n"+"Nov 30 14:46:03.826 FTL "+long+"\n"); got != "" {
		t.Errorf("ClassifyServiceLog(fatal, then a long fatal) = %q, want none", got)
	}
}

func TestClassifyServiceLogReturnsNoText(t *testing.T) {
	log := "Nov 30 14:46:03.826 FTL failed to fetch resolver uid with provision token: " + canaryToken + " error=\"dial tcp: i/o timeout\"\n" +
		`{"level":"fatal","message":"failed to fetch resolver uid with provision token: ` + canaryToken + `","error":"x"}` + "\n"
	c, ok := ClassifyServiceLog(strings.NewReader(log))
	if !ok {
		t.Errorf("ClassifyServiceLog ok = false, want true")
	}
	if c.Name != codes.APIRejected {
		t.Errorf("ClassifyServiceLog = %q, want %s: the last exit: a JSON entry whose error is no network error", c.Name, codes.APIRejected)
	}
	for _, s := range []string{c.Name, string(c.Stage), c.Scenario, c.NextStep, c.Evidence} {
		if strings.Contains(s, "CANARY") {
			t.Errorf("ClassifyServiceLog returned text from the log: %q", s)
		}
	}
}

func TestSkipJournalPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"Nov 30 14:46:03 host ctrld[4242]: rest":       "rest",
		"Nov  3 14:46:03 my-host ctrld[1]: rest":       "rest",
		"Nov 30 14:46:03.826 FTL listener.0 x":         "Nov 30 14:46:03.826 FTL listener.0 x",
		"Nov 30 14:46:03 FTL x[1]: y":                  "Nov 30 14:46:03 FTL x[1]: y",
		"Nov 30 14:46:03 host ctrld[]: rest":           "Nov 30 14:46:03 host ctrld[]: rest",
		"Nov 30 14:46:03 host ctrld[12a]: rest":        "Nov 30 14:46:03 host ctrld[12a]: rest",
		"Nov 30 14:46:03 host [12]: rest":              "Nov 30 14:46:03 host [12]: rest",
		"Nov 30 14:46:03 host two words[12]: rest":     "Nov 30 14:46:03 host two words[12]: rest",
		"Nov 30 14:46:03":                              "Nov 30 14:46:03",
		"Nov 30 14:46:03 host":                         "Nov 30 14:46:03 host",
		"not a stamp host ctrld[1]: rest":              "not a stamp host ctrld[1]: rest",
		"Nov 30 14:46:03 host ctrld[1]: ":              "",
		"Nov 30 14:46:03  host ctrld[1]: double space": "Nov 30 14:46:03  host ctrld[1]: double space",
	} {
		if got := string(skipJournalPrefix([]byte(in))); got != want {
			t.Errorf("skipJournalPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzServiceLog(f *testing.F) {
	f.Add([]byte("Nov 30 14:45:24.609 NTC internal logging enabled\nNov 30 14:46:03.826 FTL network is not up yet\n"))
	f.Add([]byte("Nov 30 14:46:03 host ctrld[4242]: \x1b[31mFTL\x1b[0m listener.0 could not find available listen ip and port\r\n"))
	f.Add([]byte(`{"level":"fatal","error":"Device does not exist","message":"failed to fetch resolver config"}` + "\n"))
	f.Add([]byte("Nov 30 15:00:00.000 WRN service was uninstalled because device \"" + canaryResolver + "\" does not exist"))
	for _, r := range catalogueRows {
		f.Add([]byte(r.v1Line("Mar  4 20:56:16.100", true) + "\n" + r.v2Line()))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, ok := ClassifyServiceLog(bytes.NewReader(data))
		if !ok {
			if c != (codes.Code{}) {
				t.Fatalf("no cause, but a code: %+v", c)
			}
			return
		}
		reg, found := codes.Lookup(c.Name)
		if !found || reg != c || c.IsOK() || isCatchAll(c) {
			t.Fatalf("%+v is not a specific registered failure code", c)
		}
	})
}

func TestRestartFailed(t *testing.T) {
	for line, want := range map[string]bool{
		"\x1b[90mDec  2 00:36:38.283\x1b[0m \x1b[31mERR\x1b[0m \x1b[1mService restart failed\x1b[0m": true,
		"Dec  2 00:36:38.283 ERR Service restart failed":                                             true,
		"Dec  2 00:36:55.726 NTC Service restarted":                                                  false,
		"Dec  2 00:36:38.283 ERR error running task Start: exit status 1":                            false,
	} {
		if got := RestartFailed([]byte(line)); got != want {
			t.Errorf("RestartFailed(%q) = %v, want %v", line, got, want)
		}
	}
}
