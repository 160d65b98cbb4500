package parse

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

// apiRequestLines are the three places ctrld prints the error of a request
// to the Control D API, with the code each gives for an error that is the
// API's own message: the token request of the start command, the resolver
// request (start command before 1.5.0, and the daemon), and the warning of
// 1.1.x-1.2.x, which decides only with the consequence after it.
func apiRequestLines(errText string) map[string][]string {
	field := "error=" + strconv.Quote(errText)
	return map[string][]string{
		"token":           {"Dec  1 19:12:44.000 FTL failed to fetch resolver uid with provision token: " + canaryToken + " " + field},
		"resolver uid":    {"Dec  1 19:12:44.000 FTL failed to fetch resolver uid: " + canaryResolver + " " + field},
		"resolver config": {"Dec  1 19:12:44.000 FTL failed to fetch resolver config " + field + " mode=cd"},
		"1.2 warning": {
			"Dec  1 19:12:40.000 WRN could not fetch resolver config " + field + " mode=cd",
			"Dec  1 19:13:10.000 ERR Service did not start, please check system/service log for details error",
		},
		"replayed in the self-check block": {
			"Dec  1 19:12:46.000 ERR ctrld service may not have started due to an error or misconfiguration, service log:",
			"Dec  1 19:12:46.000 ??? \x1b[90mDec  1 19:12:44.000\x1b[0m \x1b[31mFTL\x1b[0m \x1b[1mfailed to fetch resolver config\x1b[0m \x1b[36merror=\x1b[0m\x1b[31m\x1b[1m" + strconv.Quote(errText) + "\x1b[0m\x1b[0m \x1b[36mmode=\x1b[0mcd",
			"Dec  1 19:12:46.000 ??? An error occurred while performing test query: could not connect to control server",
		},
	}
}

// checkAPIAnswer classifies errText in every place ctrld prints it, and in
// the daemon's log, and wants code there. The API's own messages are the
// exception: they are API_REJECTED for the token, the catch-all for a
// resolver, and the catch-all is not taken from the daemon's log.
func checkAPIAnswer(t *testing.T, errText, code string) {
	t.Helper()
	for place, lines := range apiRequestLines(errText) {
		want := code
		if code == "" {
			want = codes.BootstrapFailed
			if place == "token" {
				want = codes.APIRejected
			}
		}
		if got := classifyLines(t, lines...); got != want {
			t.Errorf("%s: %q classified %q, want %q", place, errText, got, want)
		}
	}
	log := "Dec  1 19:12:44.000 FTL failed to fetch resolver config error=" + strconv.Quote(errText) + " mode=cd\n"
	if got := serviceLogName(t, log); got != code {
		t.Errorf("daemon log: %q gives %q, want %q", errText, got, code)
	}
	j, err := json.Marshal(map[string]string{"level": "fatal", "error": errText, "mode": "cd", "message": "failed to fetch resolver config"})
	if err != nil {
		t.Fatal(err)
	}
	if got := serviceLogName(t, string(j)+"\n"); got != code {
		t.Errorf("daemon log as JSON: %q gives %q, want %q", errText, got, code)
	}
}

// ctrld's answer types, as far as decoding them matters: the success body
// and the API's error body.
type utilityResponse struct {
	Success bool `json:"success"`
	Body    struct {
		Resolver struct {
			UID string `json:"uid"`
		} `json:"resolver"`
	} `json:"body"`
}

type errorResponse struct {
	Error struct {
		Message string `json:"message"`
		Code    int    `json:"code"`
	} `json:"error"`
}

// What encoding/json itself says about bodies that are not the API's
// JSON: the texts come from this Go, not from memory. ctrld decodes both
// its success and its error answers with a json.Decoder.
func TestAPIAnswerNotTheAPIsJSON(t *testing.T) {
	bodies := map[string]string{
		"an HTML error page":      "<!DOCTYPE html>\n<html><head><title>500 Internal Server Error</title></head></html>",
		"a plain-text outage":     "Service Unavailable",
		"a captive portal":        "<html><body><form action=\"/login\">Accept the terms</form></body></html>",
		"an empty body":           "",
		"a body cut short":        `{"success": true, "body": {"resolver": {"uid": "x"`,
		"JSON of another shape":   `[{"status": "down"}]`,
		"a field of another type": `{"success": "yes"}`,
		"a trailing comma":        `{"success": true,}`,
		"a missing colon":         `{"success" true}`,
		"a broken literal":        `{"success": tru}`,
		"a broken escape":         `{"success": true, "x": "\q"}`,
		"XML":                     `<?xml version="1.0"?><error>down</error>`,
	}
	for name, body := range bodies {
		failed := 0
		for _, target := range []any{&utilityResponse{}, &errorResponse{}} {
			err := json.NewDecoder(strings.NewReader(body)).Decode(target)
			if err == nil {
				continue // unknown fields are ignored
			}
			failed++
			t.Run(fmt.Sprintf("%s into %T", name, target), func(t *testing.T) {
				checkAPIAnswer(t, err.Error(), codes.APIResponseInvalid)
			})
		}
		if failed == 0 {
			t.Errorf("%s decodes as ctrld's success and its error answer", name)
		}
	}
	// json.Unmarshal, which some releases use, words a short body its own way.
	err := json.Unmarshal([]byte(`{"success":`), &utilityResponse{})
	if err == nil {
		t.Fatal("a short body unmarshals")
	}
	checkAPIAnswer(t, err.Error(), codes.APIResponseInvalid)
}

// A JSON error answer is the API speaking: its message keeps its code.
func TestAPIAnswerTheAPIsOwnError(t *testing.T) {
	for _, body := range []string{
		`{"error": {"message": "invalid token", "code": 40001}}`,
		`{"error": {"message": "Provision token has expired", "code": 40002}}`,
		`{"error": {"message": "Invalid character in hostname", "code": 40003}}`,
		`{"error": {"message": "Internal server error", "code": 50000}}`,
		`{"error": {"message": "EOF reached on the upstream", "code": 50001}}`,
	} {
		var e errorResponse
		if err := json.NewDecoder(strings.NewReader(body)).Decode(&e); err != nil {
			t.Fatal(err)
		}
		checkAPIAnswer(t, e.Error.Message, "")
	}
	for place, lines := range apiRequestLines("Device does not exist") {
		want := codes.APIDeviceInvalid
		if place == "token" {
			want = codes.APIRejected
		}
		if got := classifyLines(t, lines...); got != want {
			t.Errorf("%s: Device does not exist classified %q, want %q", place, got, want)
		}
	}
}

// tlsClientError is what ctrld prints for a request its client sent to
// srv: Go's own error, wrapped as postUtilityAPI wraps it.
func tlsClientError(t *testing.T, srv *httptest.Server, cfg *tls.Config, handshakeTimeout time.Duration) string {
	t.Helper()
	tr := &http.Transport{TLSClientConfig: cfg, TLSHandshakeTimeout: handshakeTimeout}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	resp, err := client.Post(srv.URL+"/utility?platform=ctrld&version=v1.5.0", "application/json", strings.NewReader(`{"prov_token":"`+canaryToken+`"}`))
	if err == nil {
		resp.Body.Close()
		t.Fatalf("the request succeeded")
	}
	return fmt.Errorf("postUtilityAPI client.Do: %w", err).Error()
}

// What crypto/tls and crypto/x509 say when the API's certificate does not
// verify, from this Go. The trust store is built in the test, never read
// from the system.
func TestAPIAnswerCertificateDoesNotVerify(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"success": true}`)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	srv.StartTLS()
	defer srv.Close()
	trusted := x509.NewCertPool()
	trusted.AddCert(srv.Certificate())

	for name, cfg := range map[string]*tls.Config{
		// An SSL-inspecting proxy whose CA the device does not trust.
		"unknown authority": {RootCAs: x509.NewCertPool()},
		// ctrld's fallback to the API's IP reaches whatever answers there.
		"another host's certificate": {RootCAs: trusted, ServerName: "api.controld.com"},
		"a clock years ahead":        {RootCAs: trusted, Time: func() time.Time { return time.Now().AddDate(200, 0, 0) }},
		"a clock years behind":       {RootCAs: trusted, Time: func() time.Time { return time.Date(1969, 1, 1, 0, 0, 0, 0, time.UTC) }},
	} {
		t.Run(name, func(t *testing.T) {
			text := tlsClientError(t, srv, cfg, 0)
			if !strings.Contains(text, "x509:") {
				t.Fatalf("Go's error %q has no x509: in it", text)
			}
			checkAPIAnswer(t, text, codes.APITLSFailed)
		})
	}
	t.Run("the same through ctrld's fallback to the API's IP", func(t *testing.T) {
		first := tlsClientError(t, srv, &tls.Config{RootCAs: x509.NewCertPool()}, 0)
		checkAPIAnswer(t, "request failed: "+first+"; fallback to direct ip 147.185.34.1 failed: dial tcp 147.185.34.1:443: connect: network is unreachable", codes.APITLSFailed)
	})
}

// A handshake that never finishes is the network, not the certificate.
func TestAPIAnswerTLSHandshakeTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c // hold it open and say nothing
		}
	}()
	defer func() {
		select {
		case c := <-accepted:
			c.Close()
		default:
		}
	}()
	srv := &httptest.Server{URL: "https://" + ln.Addr().String()}
	text := tlsClientError(t, srv, &tls.Config{RootCAs: x509.NewCertPool()}, 50*time.Millisecond)
	if !strings.Contains(strings.ToLower(text), "tls handshake timeout") {
		t.Fatalf("Go's error %q is not a handshake timeout", text)
	}
	checkAPIAnswer(t, text, codes.APIUnreachable)
}

// Network errors keep API_UNREACHABLE, whatever else is in the request line.
func TestAPIAnswerNetworkErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	client := &http.Client{Timeout: 5 * time.Second}
	_, err = client.Post("https://"+addr+"/utility?platform=ctrld&version=v1.5.0", "application/json", strings.NewReader("{}"))
	if err == nil {
		t.Fatal("a closed port answered")
	}
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Fatalf("%v is not a network error", err)
	}
	for _, text := range []string{
		fmt.Errorf("postUtilityAPI client.Do: %w", err).Error(),
		// The captures' offline runs.
		`postUtilityAPI client.Do: Post "https://147.185.34.1/utility?platform=ctrld&version=v1.5.0": dial tcp6 [2606:1a40:3::1]:443: connect: network is unreachable`,
		`client.Do: Post "https://api.controld.com/utility?platform=ctrld": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
		// A connection dropped in the middle of the answer.
		`postUtilityAPI client.Do: Post "https://api.controld.com/utility": unexpected EOF`,
		`postUtilityAPI client.Do: Post "https://api.controld.com/utility": EOF`,
		`postUtilityAPI client.Do: Post "https://api.controld.com/utility": read tcp 10.0.0.2:51234->147.185.34.1:443: read: connection reset by peer`,
		// The server refusing the handshake is not a certificate that failed to verify.
		`postUtilityAPI client.Do: Post "https://api.controld.com/utility": remote error: tls: handshake failure`,
	} {
		checkAPIAnswer(t, text, codes.APIUnreachable)
	}
}

func TestClassifierTLSAndDecodeLists(t *testing.T) {
	for _, m := range legacyTLSErrors {
		// Mixed case: v2 and wrappers vary.
		text := "post: " + strings.ToUpper(string(m[:1])) + string(m[1:]) + " something"
		checkAPIAnswer(t, text, codes.APITLSFailed)
	}
	for _, m := range legacyDecodeErrors {
		checkAPIAnswer(t, strings.ToUpper(string(m[:1]))+string(m[1:]), codes.APIResponseInvalid)
	}
	for _, ctx := range legacySyntaxContexts {
		checkAPIAnswer(t, "invalid character '<"+string(ctx)+"value", codes.APIResponseInvalid)
		// Without the decoder's quoted character it is someone's message.
		checkAPIAnswer(t, "invalid character"+string(ctx[1:])+"value", "")
	}
	for _, text := range []string{"EOF", "eof"} {
		checkAPIAnswer(t, text, codes.APIResponseInvalid)
	}
	for _, text := range []string{"EOF reached", "EOFX", "no EOF"} {
		checkAPIAnswer(t, text, "")
	}
}

// The console writer leaves a value without spaces unquoted: error=EOF.
func TestClassifierBareEOFField(t *testing.T) {
	for _, tc := range []struct {
		line, want string
	}{
		{"Dec  1 19:12:44.000 FTL failed to fetch resolver uid with provision token: " + canaryToken + " error=EOF", codes.APIResponseInvalid},
		{"Dec  1 19:12:44.000 FTL failed to fetch resolver config error=EOF mode=cd", codes.APIResponseInvalid},
		{"Dec  1 19:12:44.000 FTL failed to fetch resolver config error=EOF\tmode=cd", codes.APIResponseInvalid},
		{"Dec  1 19:12:44.000 FTL failed to fetch resolver config error=EOFISH mode=cd", codes.BootstrapFailed},
		{"Dec  1 19:12:44.000 FTL failed to fetch resolver config error=eofx error=EOF", codes.APIResponseInvalid},
		{"Nov 29 12:30:00.000\tFATAL\tFailed to fetch resolver config\t{\"error\":\"EOF\"}", codes.APIResponseInvalid},
		// A token that spells error=EOF is skipped with the secret.
		{"Dec  1 19:12:44.000 FTL failed to fetch resolver uid with provision token: error=EOF error=\"invalid token\"", codes.APIRejected},
	} {
		if got := classifyLines(t, tc.line); got != tc.want {
			t.Errorf("%q classified %q, want %q", tc.line, got, tc.want)
		}
	}
}

func FuzzAPIAnswer(f *testing.F) {
	for _, e := range []string{
		"invalid character '<' looking for beginning of value",
		`postUtilityAPI client.Do: Post "https://147.185.34.1/utility?platform=ctrld&version=v1.5.0": tls: failed to verify certificate: x509: certificate is valid for 127.0.0.1, not 147.185.34.1`,
		`postUtilityAPI client.Do: Post "https://api.controld.com/utility": net/http: TLS handshake timeout`,
		"unexpected end of JSON input", "EOF", "invalid token", "Device does not exist", "",
	} {
		f.Add(e, "tok123")
	}
	f.Fuzz(func(t *testing.T, errText, token string) {
		if strings.ContainsAny(token, " \t\r\n\x1b") || token == "" || strings.ContainsAny(errText, "\n\r") {
			t.Skip()
		}
		low := []byte(strconv.Quote(errText))
		for i, b := range low {
			low[i] = asciiToLower(b)
		}
		line := func(tok string) string {
			return "Dec  1 19:12:44.000 FTL failed to fetch resolver uid with provision token: " + tok + " error=" + strconv.Quote(errText)
		}
		got := classifyLines(t, line(token))
		// The token never steers the result.
		if base := classifyLines(t, line("tok123")); got != base {
			t.Fatalf("token %q turns %q into %q (with tok123: %q)", token, errText, got, base)
		}
		switch {
		case containsAnyOf(low, legacyTLSErrors):
			if got != codes.APITLSFailed {
				t.Fatalf("%q names a certificate that failed to verify, classified %q", errText, got)
			}
		case containsAnyOf(low, legacyNetworkErrors):
			if got != codes.APIUnreachable {
				t.Fatalf("%q is a network error, classified %q", errText, got)
			}
		}
		if got != codes.APITLSFailed {
			// A handshake that timed out, or a refused connection, added to
			// an error that says nothing about certificates, is the network.
			for _, suffix := range []string{": net/http: TLS handshake timeout", ": dial tcp 10.0.0.1:443: connect: connection refused"} {
				wrapped := "postUtilityAPI client.Do: Post \"https://api.controld.com/utility\": " + errText + suffix
				l := "Dec  1 19:12:44.000 FTL failed to fetch resolver uid with provision token: " + token + " error=" + strconv.Quote(wrapped)
				if g := classifyLines(t, l); g != codes.APIUnreachable {
					t.Fatalf("%q classified %q, want %s", wrapped, g, codes.APIUnreachable)
				}
			}
		}
		// The resolver request reads the same words the same way; only the
		// API's own message differs (a deleted device, or the catch-all).
		res := classifyLines(t, "Dec  1 19:12:44.000 FTL failed to fetch resolver config error="+strconv.Quote(errText)+" mode=cd")
		switch got {
		case codes.APIRejected:
			if res != codes.APIDeviceInvalid && res != codes.BootstrapFailed {
				t.Fatalf("%q: token %q, resolver %q", errText, got, res)
			}
		default:
			if res != got && res != codes.APIDeviceInvalid {
				t.Fatalf("%q: token %q, resolver %q", errText, got, res)
			}
		}
		if c, ok := ClassifyServiceLog(bytes.NewReader([]byte("Dec  1 19:12:44.000 FTL failed to fetch resolver config error=" + strconv.Quote(errText) + " mode=cd\n"))); ok && c.Name != res {
			t.Fatalf("%q: the daemon's log gives %q, its output %q", errText, c.Name, res)
		}
	})
}
