package parse

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

// A parser result is either a registered code, taken whole from the
// registry, or a clean rejection that carries nothing.
func checkCode(t *testing.T, c codes.Code, ok bool) {
	t.Helper()
	if !ok {
		if c != (codes.Code{}) {
			t.Fatalf("rejection carries a code: %+v", c)
		}
		return
	}
	reg, found := codes.Lookup(c.Name)
	if !found || reg != c {
		t.Fatalf("%+v is not the registry's code", c)
	}
	switch c.Stage {
	case codes.StageBootstrap, codes.StageListener, codes.StageService:
	default:
		t.Fatalf("%s is not a stage ctrld can report", c.Name)
	}
}

func FuzzIdentifierLine(f *testing.F) {
	for _, c := range codes.All() {
		f.Add([]byte("provisioning failed: stage=" + string(c.Stage) + " code=" + c.Name + " (exit " + strconv.Itoa(c.Exit) + ")"))
	}
	f.Add([]byte("\x1b[31mprovisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)\x1b[0m\r"))
	f.Add([]byte("provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41) " + canaryToken))
	f.Add([]byte("provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 0000000041)"))
	f.Fuzz(func(t *testing.T, line []byte) {
		// The cheap first-byte check must see what stripping would.
		if stripped, rest := StripANSI(line), skipLeadingEscapes(line); len(stripped) > 0 && (len(rest) == 0 || rest[0] != stripped[0]) {
			t.Fatalf("skipLeadingEscapes(%q) disagrees with StripANSI", line)
		}
		c, ok := IdentifierLine(line)
		checkCode(t, c, ok)
		if ok {
			// Accepted lines are exactly the grammar: nothing else survives.
			want := "provisioning failed: stage=" + string(c.Stage) + " code=" + c.Name + " (exit " + strconv.Itoa(c.Exit) + ")"
			if got := string(TrimLineEnd(StripANSI(line))); got != want {
				t.Fatalf("accepted %q, which is not %q", got, want)
			}
		}
	})
}

func FuzzResultFile(f *testing.F) {
	f.Add([]byte(`{"version": 1, "timestamp": "2026-08-18T12:00:00Z", "stage": "listener", "code": "LISTENER_BIND_FAILED", "exit_code": 41, "message": "x", "detail": {"attempts": [{"addr": "127.0.0.1:53"}]}}`))
	f.Add([]byte(`{"version":1,"stage":"bootstrap","code":"API_UNREACHABLE","exit_code":31,"future":[1,{"a":null}]}`))
	f.Add([]byte(`{"version":1,"stage":"service","code":"DEACTIVATION_PIN_REQUIRED","exit_code":126}`))
	f.Add([]byte(`{"version":1,"stage":"installer","code":"INSTALLER_USAGE","exit_code":61}`))
	f.Add([]byte(`{"version":1,"stage":"listener","code":"` + canaryToken + `","exit_code":41}`))
	f.Add([]byte(`{"version":1,"stage":"listener","code":"LISTENER_BIND_FAILED","exit_code":41.0}`))
	f.Add([]byte(`{"version":1,"version":2,"stage":"listener","code":"LISTENER_BIND_FAILED","exit_code":41}`))
	f.Add([]byte(`{"Version":1,"STAGE":"listener","Code":"LISTENER_BIND_FAILED","Exit_Code":41}`))
	f.Add([]byte(strings.Repeat("[", 1000)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ResultFile(bytes.NewReader(data))
		checkCode(t, c, err == nil)
		if err != nil {
			for _, known := range []error{ErrResultTooLarge, ErrResultNotJSON, ErrResultVersion, ErrResultUnknown, ErrResultIncomplete} {
				if err == known {
					return
				}
			}
			t.Fatalf("unexpected error value %v", err)
		}
	})
}

func FuzzCtrldVersion(f *testing.F) {
	for _, s := range []string{
		"ctrld version 1.1.3\n", "ctrld version v1.3.11-1a2b3c4\n", "ctrld version v1.5.0\n",
		"ctrld version dev-2926c76\n", "ctrld version dev-none\n", "ctrld version v2.0.0-beta.1+meta\n",
		"ctrld version " + canaryToken + "\n", "garbage\nctrld version v1.4.2\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := CtrldVersion(bytes.NewReader(data))
		if err != nil {
			if v != nil || err != errNotVersionOutput {
				t.Fatalf("error %v with version %v", err, v)
			}
			return
		}
		if v == nil {
			return // a dev build: no version, no error
		}
		// What reaches the surfaces is DisplayVersion: numbers and a
		// conventional pre-release label, nothing else of what ctrld printed.
		d := DisplayVersion(v)
		if !IsDisplayVersion(d) {
			t.Fatalf("DisplayVersion gave %q, which it would not give", d)
		}
		for _, r := range strings.TrimSuffix(d, "-prerelease") {
			if !(r >= '0' && r <= '9' || r == '.' || r == '-' || strings.ContainsRune("alphbetrcdvpe", r)) {
				t.Fatalf("display version %q carries text beyond a conventional label", d)
			}
		}
	})
}
