package explain

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/profile"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
)

// canary stands for a provisioning token pasted along with a code.
const canary = "CANARYTOKEN0123456789abcdef"

func names(cs []codes.Code) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func TestResolveEachInputForm(t *testing.T) {
	bind := []string{codes.ListenerBindFailed}
	for _, tc := range []struct {
		name  string
		input string
		codes []string
		words []string
	}{
		{"code", "LISTENER_BIND_FAILED", bind, nil},
		{"lower case", "listener_bind_failed", bind, nil},
		{"spaces and hyphens", "  Listener-Bind failed\n", bind, nil},
		{"exit number", "41", bind, nil},
		{"exit with a word", "exit 41", bind, nil},
		{"exit status", "Exit status 41", bind, nil},
		{"exit in parentheses", "(exit 41)", bind, nil},
		{"exit 126", "126", []string{codes.DeactivationPinRequired}, nil},
		{"whole failure line", report.Prefix + codes.FailureLine(codes.VerbProvisioning, codes.Must(codes.ListenerBindFailed)), bind, nil},
		{"install.log line", "Nov 29 10:14:03 mac-17 installd[812]: ./postinstall: ctrld-install: provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)", bind, nil},
		{"ctrld's own line", "provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)", bind, nil},
		{"retry line", "ctrld-install: attempt 1 failed: stage=bootstrap code=API_UNREACHABLE (exit 31); retrying in 10s", []string{codes.APIUnreachable}, nil},
		{"jamf extension attribute", "<result>LISTENER_BIND_FAILED</result>", bind, nil},
		{"jamf extension attribute, spaced", "<result> listener_bind_failed </result>", bind, nil},
		{"record fragment", `{"result":"failed","stage":"service","code":"SERVICE_NOT_RUNNING","exit_code":55}`, []string{codes.ServiceNotRunning}, nil},
		{"bare code=", "code=CTRLD_TIMEOUT", []string{codes.CtrldTimeout}, nil},
		{"several lines, in order, once each", "attempt 1 failed: stage=bootstrap code=API_UNREACHABLE (exit 31)\n" +
			"provisioning failed: stage=installer code=CTRLD_TIMEOUT (exit 64)\n<result>API_UNREACHABLE</result>",
			[]string{codes.APIUnreachable, codes.CtrldTimeout}, nil},
		{"every form, in order of appearance", "<result>OK</result>\nprovisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)",
			[]string{codes.OK, codes.ListenerBindFailed}, nil},
		{"identifiers around another form, in order", "attempt 1 failed: stage=bootstrap code=API_UNREACHABLE (exit 31)\n" +
			"<result>OK</result>\nprovisioning failed: stage=installer code=CTRLD_TIMEOUT (exit 64)",
			[]string{codes.APIUnreachable, codes.OK, codes.CtrldTimeout}, nil},
		// Not the identifier grammar, whose case is exact: its code= names the code.
		{"failure line in lower case", "provisioning failed: stage=listener code=listener_bind_failed (exit 41)", bind, nil},
		{"code next to a pasted token", "--token " + canary + " gave code=CTRLD_TIMEOUT", []string{codes.CtrldTimeout}, nil},
		{"response invalid by name", "api_response_invalid", []string{codes.APIResponseInvalid}, nil},
		{"response invalid by exit", "exit 36", []string{codes.APIResponseInvalid}, nil},
		{"tls by exit", "37", []string{codes.APITLSFailed}, nil},
		{"tls failure line", "ctrld-install: provisioning failed: stage=bootstrap code=API_TLS_FAILED (exit 37)", []string{codes.APITLSFailed}, nil},
		{"status word", "NEVER_RUN", nil, []string{states.NeverRun}},
		{"status word as jamf shows it", "<result>RUNNING</result>", nil, []string{states.Running}},
		{"status word, lower case", "invalid record", nil, []string{states.InvalidRecord}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Resolve(tc.input)
			if err != nil {
				t.Fatalf("Resolve(%q): %v", tc.input, err)
			}
			if got := nilIfEmpty(names(a.Codes)); !reflect.DeepEqual(got, tc.codes) {
				t.Errorf("Resolve(%q) codes = %q, want %q", tc.input, got, tc.codes)
			}
			var words []string
			for _, w := range a.Words {
				words = append(words, w.Word)
			}
			if !reflect.DeepEqual(words, tc.words) {
				t.Errorf("Resolve(%q) words = %q, want %q", tc.input, words, tc.words)
			}
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestResolveProfileExitStatuses(t *testing.T) {
	uses := func(a Answer) map[profile.Name][]string {
		m := map[profile.Name][]string{}
		for _, u := range a.Profiles {
			m[u.Profile] = append(m[u.Profile], u.Code.Name)
		}
		return m
	}
	a, err := Resolve("1618")
	if err != nil {
		t.Fatalf("Resolve(1618): %v", err)
	}
	if len(a.Codes) != 0 {
		t.Errorf("Resolve(1618) codes = %q, want none", names(a.Codes))
	}
	if got, want := uses(a), (map[profile.Name][]string{profile.Intune: {codes.APIUnreachable, codes.CtrldTimeout, codes.InstallerBusy, codes.APIResponseInvalid}}); !reflect.DeepEqual(got, want) {
		t.Errorf("Resolve(1618) profiles = %v, want %v", got, want)
	}

	// What macOS and Linux keep of 1618.
	a, err = Resolve("82")
	if err != nil {
		t.Fatalf("Resolve(82): %v", err)
	}
	if len(a.Profiles) == 0 {
		t.Fatalf("Resolve(82) has no profiles, want intune's truncated 1618")
	}
	if !a.Profiles[0].Truncated {
		t.Errorf("Resolve(82) profile %s: Truncated = false, want true", a.Profiles[0].Profile)
	}
	if got, want := a.Profiles[0].Status, 1618; got != want {
		t.Errorf("Resolve(82) profile %s: Status = %d, want %d", a.Profiles[0].Profile, got, want)
	}

	a, err = Resolve("210")
	if err != nil {
		t.Fatalf("Resolve(210): %v", err)
	}
	if got, want := uses(a), (map[profile.Name][]string{profile.FileWave: {codes.OK, codes.DeactivationPinRequired}}); !reflect.DeepEqual(got, want) {
		t.Errorf("Resolve(210) profiles = %v, want %v", got, want)
	}
	if !a.Profiles[0].Skipped {
		t.Errorf("Resolve(210) profile %s code %s: Skipped = false, want true: OK maps to 210 only when the run was skipped", a.Profiles[0].Profile, a.Profiles[0].Code.Name)
	}

	a, err = Resolve("220")
	if err != nil {
		t.Fatalf("Resolve(220): %v", err)
	}
	var tls bool
	for _, u := range a.Profiles {
		if u.Code.Class != codes.ClassFatal {
			t.Errorf("Resolve(220) profile %s code %s: class %s, want %s", u.Profile, u.Code.Name, u.Code.Class, codes.ClassFatal)
		}
		tls = tls || u.Profile == profile.FileWave && u.Code.Name == codes.APITLSFailed
	}
	if !tls {
		t.Errorf("Resolve(220) profiles = %v, want filewave's %s among them", uses(a), codes.APITLSFailed)
	}

	// 0 is OK, and also what jamf and intune report for a PIN-protected
	// device.
	a, err = Resolve("0")
	if err != nil {
		t.Fatalf("Resolve(0): %v", err)
	}
	if got, want := names(a.Codes), []string{codes.OK}; !slices.Equal(got, want) {
		t.Errorf("Resolve(0) codes = %q, want %q", got, want)
	}
	if got, want := uses(a), (map[profile.Name][]string{profile.Intune: {codes.DeactivationPinRequired}, profile.Jamf: {codes.DeactivationPinRequired}}); !reflect.DeepEqual(got, want) {
		t.Errorf("Resolve(0) profiles = %v, want %v", got, want)
	}
}

func TestResolveRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input string
		err   error
	}{
		{"empty", "", ErrEmpty},
		{"blank", " \t\n", ErrEmpty},
		{"unknown word", "BOGUS_CODE", ErrUnknown},
		{"unused exit status", "43", ErrUnknown},
		{"a pasted token", canary, ErrUnknown},
		{"unregistered result", "<result>" + canary + "</result>", ErrUnknown},
		{"stage disagrees", "provisioning failed: stage=bootstrap code=LISTENER_BIND_FAILED (exit 41)", ErrDisagrees},
		{"exit disagrees", "provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 40)", ErrDisagrees},
		{"unregistered code in a failure line", "provisioning failed: stage=listener code=LISTENER_EXPLODED (exit 49)", ErrDisagrees},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Resolve(tc.input)
			if !errors.Is(err, tc.err) {
				t.Errorf("Resolve(%q) = %v, want %v", tc.input, err, tc.err)
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("Resolve(%q) error repeats the canary: %v", tc.input, err)
			}
		})
	}
}

func TestNearest(t *testing.T) {
	for _, tc := range []struct {
		input string
		first string
	}{
		{"LISTNER_BIND_FAILD", codes.ListenerBindFailed},
		{"bind failed", codes.ListenerBindFailed},
		{"api unreachabl", codes.APIUnreachable},
		{"TIMEOUT", codes.CtrldTimeout},
		{"servce not runing", codes.ServiceNotRunning},
		{"SERVICE_SELF_CHECK_FAILED", codes.ServiceSelfcheckFailed},
		{"DEACTIVATION_PIN", codes.DeactivationPinRequired},
		{"43", codes.ListenerConfiguredAddrUnavailable},
		{"stage=bootstrap code=LISTENER_BIND_FAILED (exit 41)", codes.ListenerBindFailed},
		{"<result>LISTENER_BIND_FAILD</result>", codes.ListenerBindFailed},
	} {
		t.Run(tc.input, func(t *testing.T) {
			near := Nearest(tc.input, 3)
			if len(near) == 0 {
				t.Fatalf("Nearest(%q, 3) is empty, want %s first", tc.input, tc.first)
			}
			if len(near) > 3 {
				t.Errorf("Nearest(%q, 3) = %q, want at most 3", tc.input, names(near))
			}
			if near[0].Name != tc.first {
				t.Errorf("Nearest(%q, 3) = %q, want %s first", tc.input, names(near), tc.first)
			}
		})
	}
	// The nearest exit is the registry's, not a list written here, so a
	// code added next to it changes the answer and not the test.
	for _, n := range []int{35, 47, 57, 69} {
		want := nearestInRegistry(n)
		for _, input := range []string{fmt.Sprint(n), fmt.Sprintf("exit %d", n), fmt.Sprintf("0x%x", n), fmt.Sprintf("Script exit code: %d", n)} {
			near := Nearest(input, 3)
			if len(near) == 0 {
				t.Fatalf("Nearest(%q, 3) is empty, want %s first", input, want)
			}
			if near[0].Name != want {
				t.Errorf("Nearest(%q, 3) = %q, want %s first", input, names(near), want)
			}
		}
	}
	// Nothing rather than a poor guess.
	for _, input := range []string{canary, "zzz", "FOO_FAILED", "9999", strings.Repeat("LISTENER_", 20)} {
		if near := Nearest(input, 3); len(near) != 0 {
			t.Errorf("Nearest(%q, 3) = %q, want none", input, names(near))
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"LISTNER", "LISTENER", 1},
		{"kitten", "sitting", 3},
	} {
		if got := EditDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// Every status word has an explanation written like the registry's.
func TestStatusWordsAreWellFormed(t *testing.T) {
	for _, w := range states.All {
		if _, clash := codes.Lookup(w.Word); clash {
			t.Errorf("codes.Lookup(%q) found a code: %s is also a code", w.Word, w.Word)
		}
		for _, s := range []string{w.Meaning, w.NextStep} {
			if !strings.HasSuffix(s, ".") {
				t.Errorf("%s: %q does not end with a period", w.Word, s)
			}
		}
	}
}

// nearestInRegistry is the code whose exit is closest to n, the first in
// registry order on a tie.
func nearestInRegistry(n int) string {
	best, dist := "", -1
	for _, c := range codes.All() {
		if d := abs(c.Exit - n); dist < 0 || d < dist {
			best, dist = c.Name, d
		}
	}
	return best
}

// What admins paste from MDM consoles and logs: the exit status after the
// words each tool puts before it, and in hexadecimal from Windows.
func TestResolveExitAsToolsPrintIt(t *testing.T) {
	t.Parallel()
	bind := codes.Must(codes.ListenerBindFailed)
	for _, input := range []string{
		"Script exit code: 41",                          // Jamf policy log
		"return code was 41.",                           // Jamf, end of "Error running script: ..."
		"Error running script: return code was 41.",     // the whole Jamf line
		"FAILED with return code: 41",                   // Munki Install.log
		"exit code 41", "Exit Code: 41", "exit_code=41", // hand-typed and key=value logs
		"exit status 41", "exited with code 41", "exited with status 41",
		"script-exit-code:41",
		"0x29", "0X29", "0x00000029", "exit code 0x29", "(0x29)",
		"0x80070029", // the HRESULT Windows wraps an install's exit status in
		"  41.  ",
	} {
		a, err := Resolve(input)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", input, err)
		}
		if !a.IsExit {
			t.Errorf("Resolve(%q): IsExit = false, want true", input)
		}
		if a.Exit != bind.Exit {
			t.Errorf("Resolve(%q): Exit = %d, want %d", input, a.Exit, bind.Exit)
		}
		if got, want := names(a.Codes), []string{bind.Name}; !slices.Equal(got, want) {
			t.Errorf("Resolve(%q) codes = %q, want %q", input, got, want)
		}
	}
	for _, input := range []string{"0x00000652", "0x652", "0x80070652", "exit code 0x00000652"} {
		a, err := Resolve(input)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", input, err)
		}
		if a.Exit != 1618 {
			t.Errorf("Resolve(%q): Exit = %d, want 1618", input, a.Exit)
		}
		if len(a.Profiles) == 0 {
			t.Errorf("Resolve(%q) has no profiles, want some", input)
		}
	}

	// A Jamf policy log pasted whole, without ctrld-install's lines: the
	// exit status lines agree, the rest is ignored.
	a, err := Resolve("Executing Policy ctrld\nRunning script ctrld-install.sh...\nScript exit code: 41\nScript result: " + canary + "\nError running script: return code was 41.\n")
	if err != nil {
		t.Fatalf("Resolve(jamf policy log): %v", err)
	}
	if got, want := names(a.Codes), []string{bind.Name}; !slices.Equal(got, want) {
		t.Errorf("Resolve(jamf policy log) codes = %q, want %q", got, want)
	}

	for _, input := range []string{
		"Script exit code: 41\nError running script: return code was 42.", // lines that disagree
		"0x", "0x123456789", "0xZZ", "exit code", "41 " + canary, "Script exit code: 41 " + canary,
		"exit code 41 and more", "code 41", "return 41",
		"Executing Policy ctrld\n41\n" + canary, // a bare number among lines may be anything
	} {
		_, err := Resolve(input)
		if !errors.Is(err, ErrUnknown) {
			t.Errorf("Resolve(%q) = %v, want %v", input, err, ErrUnknown)
		}
		if err != nil && strings.Contains(err.Error(), canary) {
			t.Errorf("Resolve(%q) error repeats the canary: %v", input, err)
		}
	}
}

// Exit 126 is also a shell's "cannot execute": the answer says so, how to
// tell the two apart, and what the profiles do with a real refusal, all
// from the registry and the profiles.
func TestExplain126(t *testing.T) {
	t.Parallel()
	pin, ok := codes.ByExit(126)
	if !ok {
		t.Fatalf("codes.ByExit(126) found no code")
	}
	for _, input := range []string{"126", "exit code 126", "Script exit code: 126", "0x7e"} {
		a, err := Resolve(input)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", input, err)
		}
		if a.Shell == nil {
			t.Fatalf("Resolve(%q): Shell = nil, want the shell's meaning of 126", input)
		}
		if got, want := names(a.Codes), []string{pin.Name}; !slices.Equal(got, want) {
			t.Errorf("Resolve(%q) codes = %q, want %q", input, got, want)
		}
		var b bytes.Buffer
		if err := WriteAnswer(&b, a); err != nil {
			t.Fatalf("WriteAnswer(%q): %v", input, err)
		}
		out := b.String()
		for _, want := range []string{
			pin.Scenario,
			"a shell reports 126 when it found the program but could not execute it",
			"another architecture", "execute bit", "noexec",
			`"` + strings.TrimSpace(report.Prefix) + `"`,
			"code=" + pin.Name + " only when",
			"file /usr/local/bin/ctrld-install", "uname -m",
			fmt.Sprintf("--exit-profile %s reports %s as exit %d", profile.Jamf, pin.Name, profile.ExitStatus(profile.Jamf, pin, false)),
		} {
			if !strings.Contains(out, want) {
				t.Errorf("WriteAnswer(%q) wrote:\n%s\nwant it to contain %q", input, out, want)
			}
		}
		if unwanted := "--exit-profile " + string(profile.Default) + " reports"; strings.Contains(out, unwanted) {
			t.Errorf("WriteAnswer(%q) wrote:\n%s\nwant it not to contain %q", input, out, unwanted)
		}
	}
	// The name is not ambiguous: ctrld-install printed it.
	a, err := Resolve(pin.Name)
	if err != nil {
		t.Fatalf("Resolve(%q): %v", pin.Name, err)
	}
	if a.Shell != nil {
		t.Errorf("Resolve(%q): Shell = %+v, want nil", pin.Name, a.Shell)
	}
	// Nor is any other exit status.
	a, err = Resolve("41")
	if err != nil {
		t.Fatalf("Resolve(41): %v", err)
	}
	if a.Shell != nil {
		t.Errorf("Resolve(41): Shell = %+v, want nil", a.Shell)
	}
}

// No answer repeats what was pasted around the number or code.
func TestExplainNeverEchoesInput(t *testing.T) {
	t.Parallel()
	for _, input := range []string{
		"Script exit code: 41\nScript result: --token " + canary + "\nError running script: return code was 41.",
		"exit code 126\n" + canary,
		"ctrld-install: uninstall failed: stage=service code=DEACTIVATION_PIN_REQUIRED (exit 126) --pin " + canary,
		"ctrld-install: verify failed: stage=service code=SERVICE_NOT_RUNNING (exit 55) " + canary,
	} {
		a, err := Resolve(input)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", input, err)
		}
		var b bytes.Buffer
		if err := WriteAnswer(&b, a); err != nil {
			t.Fatalf("WriteAnswer(%q): %v", input, err)
		}
		for _, leak := range []string{canary, strings.ToLower(canary), canary[:12]} {
			if strings.Contains(b.String(), leak) {
				t.Errorf("WriteAnswer(%q) wrote:\n%s\nwant it not to contain %q", input, b.String(), leak)
			}
		}
	}
}
