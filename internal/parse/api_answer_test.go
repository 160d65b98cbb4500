package parse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

// apiRequestLines are the places ctrld prints the error of a request to the
// Control D API: the token request of the start command, the resolver
// request (the start command before 1.5.0, and the daemon, replayed in the
// self-check block), and the warning of 1.1.x-1.2.x, which decides only
// with the consequence after it.
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
		"a proxy's own JSON":      `{"error": "Service Unavailable"}`,
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
	// json.Unmarshal words a short body its own way.
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

// What the API's certificate failing verification reads as: crypto/x509's
// errors as Go 1.26 printed them for a test certificate (unknown
// authority, another host, a clock past the certificate), the captures'
// (apibadcert: another address, seen through ctrld's fallback request), and
// Go's words for a certificate without names or without IP addresses, and
// macOS's for an untrusted one.
var certificateErrors = []string{
	`x509: certificate signed by unknown authority`,
	`x509: certificate is valid for example.com, *.example.com, not api.controld.com`,
	`x509: certificate has expired or is not yet valid: current time 2226-12-01T20:26:00Z is after 2084-01-29T16:00:00Z`,
	`x509: certificate is valid for 127.0.0.1, not 147.185.34.1`,
	`x509: certificate is not valid for any names, but wanted to match api.controld.com`,
	`x509: cannot validate certificate for 147.185.34.1 because it doesn't contain any IP SANs`,
	`x509: “api.controld.com” certificate is not trusted`,
}

// The certificate errors as ctrld prints them: inside crypto/tls's
// "failed to verify certificate", net/http's url.Error and postUtilityAPI's
// wrapper (the apibadcert captures), or with less around them.
func TestAPIAnswerCertificateDoesNotVerify(t *testing.T) {
	for _, e := range certificateErrors {
		checkAPIAnswer(t, `postUtilityAPI client.Do: Post "https://147.185.34.1/utility?platform=ctrld&version=v1.5.0": tls: failed to verify certificate: `+e, codes.APITLSFailed)
		checkAPIAnswer(t, `client.Do: Post "https://api.controld.com/utility?platform=ctrld": `+e, codes.APITLSFailed)
		// Through the fallback of later ctrld, the first attempt's error first.
		checkAPIAnswer(t, `postUtilityAPI client.Do: request failed: Post "https://api.controld.com/utility": tls: failed to verify certificate: `+e+
			"; fallback to direct ip 147.185.34.1 failed: dial tcp 147.185.34.1:443: connect: network is unreachable", codes.APITLSFailed)
	}
}

// Network errors keep API_UNREACHABLE, a handshake that never finished
// among them: it is the network, not the certificate.
func TestAPIAnswerNetworkErrors(t *testing.T) {
	for _, text := range []string{
		// The captures' offline runs.
		`postUtilityAPI client.Do: Post "https://147.185.34.1/utility?platform=ctrld&version=v1.5.0": dial tcp6 [2606:1a40:3::1]:443: connect: network is unreachable`,
		`client.Do: Post "https://api.controld.com/utility?platform=ctrld": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`,
		`client.Do: Post "https://api.controld.com/utility?platform=ctrld&version=v1.2.1-0c99d27": dial tcp: lookup api.controld.com on 10.255.255.53:53: dial udp 76.76.2.0:53: connect: network is unreachable`,
		// net/http's words for a handshake that timed out.
		`postUtilityAPI client.Do: Post "https://api.controld.com/utility": net/http: TLS handshake timeout`,
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
