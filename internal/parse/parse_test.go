package parse

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

const (
	canaryToken    = "CANARYTOKEN0123456789"
	canaryResolver = "CANARYRESOLVERabc"
)

func TestStripANSI(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"\x1b[90mNov 29 12:24:55.000\x1b[0m \x1b[31mFTL\x1b[0m \x1b[1mmsg\x1b[0m", "Nov 29 12:24:55.000 FTL msg"},
		{"\x1b[31m\x1b[1mx\x1b[0m\x1b[0m", "x"},
		{"a\x1b[?25lb", "ab"},
		{"a\x1bcb", "ab"},
		{"trailing escape\x1b", "trailing escape"},
		{"trailing csi\x1b[31", "trailing csi"},
	} {
		if got := string(StripANSI([]byte(tc.in))); got != tc.want {
			t.Errorf("StripANSI(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestIdentifierLine(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       string // code name, "" for not an identifier
	}{
		{"plain", "provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)", codes.ListenerBindFailed},
		{"crlf", "provisioning failed: stage=bootstrap code=API_UNREACHABLE (exit 31)\r", codes.APIUnreachable},
		{"trailing space", "provisioning failed: stage=service code=SERVICE_START_FAILED (exit 52)  \t", codes.ServiceStartFailed},
		{"ansi", "\x1b[31mprovisioning failed: stage=bootstrap code=API_REJECTED (exit 32)\x1b[0m", codes.APIRejected},
		{"pin", "provisioning failed: stage=service code=DEACTIVATION_PIN_REQUIRED (exit 126)", codes.DeactivationPinRequired},
		{"log prefix", "Nov 29 12:00:00.000 FTL provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)", ""},
		{"leading space", " provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)", ""},
		{"token appended", "provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41) " + canaryToken, ""},
		{"text after", "provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)x", ""},
		{"wrong stage", "provisioning failed: stage=bootstrap code=LISTENER_BIND_FAILED (exit 41)", ""},
		{"wrong exit", "provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 40)", ""},
		{"unknown code", "provisioning failed: stage=listener code=" + strings.ToUpper(canaryToken[:6]) + "_X (exit 41)", ""},
		{"installer stage is not ctrld's", "provisioning failed: stage=installer code=INSTALLER_USAGE (exit 61)", ""},
		{"ok is not a failure", "provisioning failed: stage= code=OK (exit 0)", ""},
		{"lower code", "provisioning failed: stage=listener code=listener_bind_failed (exit 41)", ""},
		{"leading zero", "provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 041)", ""},
		{"huge exit", "provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 0000041)", ""},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := IdentifierLine([]byte(tc.line))
			if tc.want == "" {
				if ok {
					t.Errorf("IdentifierLine(%q) ok = true, want false", tc.line)
				}
				if c != (codes.Code{}) {
					t.Errorf("IdentifierLine(%q) = %+v, want the zero Code", tc.line, c)
				}
				return
			}
			if !ok {
				t.Fatalf("IdentifierLine(%q) ok = false, want true", tc.line)
			}
			if c.Name != tc.want {
				t.Errorf("IdentifierLine(%q) = %s, want %s", tc.line, c.Name, tc.want)
			}
		})
	}
}

func TestCtrldVersion(t *testing.T) {
	for _, tc := range []struct {
		out, want string // want "" means unknown version, "err" means an error
	}{
		{"ctrld version 1.1.3\n", "1.1.3"},
		{"ctrld version v1.3.11-1a2b3c4\n", "1.3.11"},
		{"ctrld version v1.3.11-0123456\n", "1.3.11"},
		{"ctrld version v1.5.0\n", "1.5.0"},
		{"ctrld version v1.5.0\r\n", "1.5.0"},
		{"ctrld version v2.0.0-beta.1\n", "2.0.0-beta.1"},
		{"ctrld version dev-2926c76\n", ""},
		{"ctrld version dev-none\n", ""},
		{"noise\nctrld version v1.4.2\n", "1.4.2"},
		{"ctrld version " + canaryToken + "\n", "err"},
		{"ctrld version v1.5\n", "err"},
		{"Error: unknown flag: --version\n", "err"},
		{"", "err"},
	} {
		v, err := CtrldVersion(strings.NewReader(tc.out))
		switch tc.want {
		case "err":
			if err == nil {
				t.Errorf("CtrldVersion(%q) returned no error", tc.out)
			}
			if v != nil {
				t.Errorf("CtrldVersion(%q) = %s, want nil", tc.out, v)
			}
			if err != nil && strings.Contains(err.Error(), canaryToken) {
				t.Errorf("CtrldVersion(%q) error %q contains the token", tc.out, err)
			}
		case "":
			if err != nil {
				t.Errorf("CtrldVersion(%q): %v", tc.out, err)
			}
			if v != nil {
				t.Errorf("CtrldVersion(%q) = %s, want nil", tc.out, v)
			}
		default:
			if err != nil {
				t.Fatalf("CtrldVersion(%q): %v", tc.out, err)
			}
			if v == nil {
				t.Fatalf("CtrldVersion(%q) = nil, want %s", tc.out, tc.want)
			}
			if got := v.String(); got != tc.want {
				t.Errorf("CtrldVersion(%q) = %s, want %s", tc.out, got, tc.want)
			}
		}
	}
}

func TestCommitSuffixIsNotAPrerelease(t *testing.T) {
	a, err := ParseCtrldVersion("v1.3.11-1a2b3c4")
	if err != nil {
		t.Fatalf("ParseCtrldVersion(v1.3.11-1a2b3c4): %v", err)
	}
	b, err := ParseCtrldVersion("v1.3.11")
	if err != nil {
		t.Fatalf("ParseCtrldVersion(v1.3.11): %v", err)
	}
	if !a.Equal(b) {
		t.Errorf("%s is not equal to %s: a commit suffix must not sort the version before its tag", a, b)
	}
}

func TestResultFile(t *testing.T) {
	good := `{"version": 1, "timestamp": "2026-08-18T12:00:00Z", "stage": "listener",
 "code": "LISTENER_BIND_FAILED", "exit_code": 41,
 "message": "could not find available listen ip and port ` + canaryToken + `",
 "detail": {"attempts": [{"addr": "127.0.0.1:53", "proto": "udp", "os_error": "address already in use"}]}}`
	deep := `{"version":1,"stage":"listener","code":"LISTENER_BIND_FAILED","exit_code":41,"detail":` +
		strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`
	for _, tc := range []struct {
		name, in string
		want     string
		err      error
	}{
		{"contract example", good, codes.ListenerBindFailed, nil},
		{"unknown fields", `{"version":1,"stage":"bootstrap","code":"API_UNREACHABLE","exit_code":31,"future":{"x":[1,2]}}`, codes.APIUnreachable, nil},
		{"pin", `{"version":1,"stage":"service","code":"DEACTIVATION_PIN_REQUIRED","exit_code":126}`, codes.DeactivationPinRequired, nil},
		{"version 2", `{"version":2,"stage":"listener","code":"LISTENER_BIND_FAILED","exit_code":41}`, "", ErrResultVersion},
		{"version string", `{"version":"1","stage":"listener","code":"LISTENER_BIND_FAILED","exit_code":41}`, "", ErrResultNotJSON},
		{"no version", `{"stage":"listener","code":"LISTENER_BIND_FAILED","exit_code":41}`, "", ErrResultVersion},
		{"no exit", `{"version":1,"stage":"listener","code":"LISTENER_BIND_FAILED"}`, "", ErrResultIncomplete},
		{"stage disagrees", `{"version":1,"stage":"service","code":"LISTENER_BIND_FAILED","exit_code":41}`, "", ErrResultUnknown},
		{"exit disagrees", `{"version":1,"stage":"listener","code":"LISTENER_BIND_FAILED","exit_code":1}`, "", ErrResultUnknown},
		{"unknown code carrying the token", `{"version":1,"stage":"listener","code":"` + canaryToken + `","exit_code":41}`, "", ErrResultUnknown},
		{"installer code", `{"version":1,"stage":"installer","code":"INSTALLER_USAGE","exit_code":61}`, "", ErrResultUnknown},
		{"ok", `{"version":1,"stage":"","code":"OK","exit_code":0}`, "", ErrResultUnknown},
		{"truncated", good[:len(good)/2], "", ErrResultNotJSON},
		{"trailing garbage", `{"version":1,"stage":"bootstrap","code":"API_UNREACHABLE","exit_code":31} x`, "", ErrResultNotJSON},
		{"array", `[1]`, "", ErrResultNotJSON},
		{"null", `null`, "", ErrResultVersion},
		{"empty", ``, "", ErrResultNotJSON},
		{"deeply nested", deep, "", ErrResultNotJSON},
		{"too large", `{"version":1,"stage":"bootstrap","code":"API_UNREACHABLE","exit_code":31,"message":"` + strings.Repeat("a", MaxResultFileSize) + `"}`, "", ErrResultTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ResultFile(strings.NewReader(tc.in))
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Errorf("ResultFile() error = %v, want %v", err, tc.err)
				}
				if c != (codes.Code{}) {
					t.Errorf("ResultFile() = %+v, want the zero Code", c)
				}
				if err != nil && strings.Contains(err.Error(), canaryToken) {
					t.Errorf("ResultFile() error %q contains the token", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ResultFile(): %v", err)
			}
			if c.Name != tc.want {
				t.Errorf("ResultFile() = %s, want %s", c.Name, tc.want)
			}
		})
	}
}

func TestResultFileReadsNoMoreThanTheCap(t *testing.T) {
	r := &countingReader{r: bytes.NewReader(bytes.Repeat([]byte{' '}, 10<<20))}
	_, err := ResultFile(r)
	if !errors.Is(err, ErrResultTooLarge) {
		t.Errorf("ResultFile(10 MiB) error = %v, want %v", err, ErrResultTooLarge)
	}
	if limit := int64(MaxResultFileSize + 1); r.n > limit {
		t.Errorf("ResultFile(10 MiB) read %d bytes, want at most %d", r.n, limit)
	}
}

type countingReader struct {
	r interface{ Read([]byte) (int, error) }
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func TestSkipLeadingEscapesAgreesWithStripANSI(t *testing.T) {
	for _, in := range []string{"", "x", "\x1b", "\x1b[", "\x1b[31", "\x1b[31mprov", "\x1bcprov", "\x1b[0m\x1b[1mp\x1b[0m", "a\x1b[31m", "\x1b\x1b[1mp"} {
		stripped := StripANSI([]byte(in))
		rest := skipLeadingEscapes([]byte(in))
		if len(stripped) == 0 {
			if len(rest) != 0 {
				t.Errorf("skipLeadingEscapes(%q) = %q, want empty", in, rest)
			}
			continue
		}
		if len(rest) == 0 {
			t.Fatalf("skipLeadingEscapes(%q) is empty, but StripANSI gives %q", in, stripped)
		}
		if rest[0] != stripped[0] {
			t.Errorf("skipLeadingEscapes(%q) starts with %q, want %q (as StripANSI)", in, rest[0], stripped[0])
		}
	}
}

func TestIdentifierLineDoesNotAllocateForLogLines(t *testing.T) {
	line := []byte("\x1b[90mNov 29 12:25:02.640\x1b[0m \x1b[33mNTC\x1b[0m Starting service")
	allocs := testing.AllocsPerRun(100, func() { IdentifierLine(line) })
	if allocs != 0 {
		t.Errorf("IdentifierLine(%q) allocates %v times, want 0", line, allocs)
	}
}

func TestDisplayVersion(t *testing.T) {
	for in, want := range map[string]string{
		"v1.5.0":                     "1.5.0",
		"v1.3.11-1a2b3c4":            "1.3.11",
		"v2.0.0-beta.1":              "2.0.0-beta.1",
		"v2.0.0-rc2":                 "2.0.0-rc2",
		"v2.0.0-beta.1+build.7":      "2.0.0-beta.1",
		"v1.0.0-" + canaryResolver:   "1.0.0-prerelease",
		"v1.0.0+" + canaryToken:      "1.0.0",
		"v1.0.0-beta." + canaryToken: "1.0.0-prerelease",
		"v1.0.0-beta.123456":         "1.0.0-prerelease",
	} {
		v, err := ParseCtrldVersion(in)
		if err != nil {
			t.Fatalf("ParseCtrldVersion(%q): %v", in, err)
		}
		if got := DisplayVersion(v); got != want {
			t.Errorf("DisplayVersion(%q) = %q, want %q", in, got, want)
		}
		if got := DisplayVersion(v); !IsDisplayVersion(got) {
			t.Errorf("IsDisplayVersion(DisplayVersion(%q) = %q) = false, want true", in, got)
		}
	}
	if IsDisplayVersion("1.0.0-" + canaryToken) {
		t.Errorf("IsDisplayVersion(%q) = true, want false", "1.0.0-"+canaryToken)
	}
	if IsDisplayVersion("v1.0.0") {
		t.Errorf("IsDisplayVersion(v1.0.0) = true, want false")
	}
}
