package support

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/profile"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
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
		{"code next to a pasted token", "--token " + canary + " gave code=CTRLD_TIMEOUT", []string{codes.CtrldTimeout}, nil},
		{"status word", "NEVER_RUN", nil, []string{WordNeverRun}},
		{"status word as jamf shows it", "<result>RUNNING</result>", nil, []string{WordRunning}},
		{"status word, lower case", "invalid record", nil, []string{WordInvalidRecord}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Resolve(tc.input)
			require.NoError(t, err)
			assert.Equal(t, tc.codes, nilIfEmpty(names(a.Codes)))
			var words []string
			for _, w := range a.Words {
				words = append(words, w.Word)
			}
			assert.Equal(t, tc.words, words)
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
	require.NoError(t, err)
	assert.Empty(t, a.Codes)
	assert.Equal(t, map[profile.Name][]string{profile.Intune: {codes.APIUnreachable, codes.CtrldTimeout, codes.InstallerBusy}}, uses(a))

	// What macOS and Linux keep of 1618.
	a, err = Resolve("82")
	require.NoError(t, err)
	require.NotEmpty(t, a.Profiles)
	assert.True(t, a.Profiles[0].Truncated)
	assert.Equal(t, 1618, a.Profiles[0].Status)

	a, err = Resolve("210")
	require.NoError(t, err)
	assert.Equal(t, map[profile.Name][]string{profile.FileWave: {codes.OK, codes.DeactivationPinRequired}}, uses(a))
	assert.True(t, a.Profiles[0].Skipped, "OK maps to 210 only when the run was skipped")

	a, err = Resolve("220")
	require.NoError(t, err)
	for _, u := range a.Profiles {
		assert.Equal(t, codes.ClassFatal, u.Code.Class)
	}

	// 0 is OK, and also what jamf reports for a PIN-protected device.
	a, err = Resolve("0")
	require.NoError(t, err)
	assert.Equal(t, []string{codes.OK}, names(a.Codes))
	assert.Equal(t, map[profile.Name][]string{profile.Jamf: {codes.DeactivationPinRequired}}, uses(a))
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
			assert.ErrorIs(t, err, tc.err)
			assert.NotContains(t, err.Error(), canary)
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
			require.NotEmpty(t, near)
			assert.LessOrEqual(t, len(near), 3)
			assert.Equal(t, tc.first, near[0].Name)
		})
	}
	// The nearest exit is the registry's, not a list written here, so a
	// code added next to it changes the answer and not the test.
	for _, n := range []int{35, 47, 57, 69} {
		want := nearestInRegistry(n)
		for _, input := range []string{fmt.Sprint(n), fmt.Sprintf("exit %d", n), fmt.Sprintf("0x%x", n), fmt.Sprintf("Script exit code: %d", n)} {
			near := Nearest(input, 3)
			require.NotEmpty(t, near, input)
			assert.Equal(t, want, near[0].Name, input)
		}
	}
	// Nothing rather than a poor guess.
	for _, input := range []string{canary, "zzz", "FOO_FAILED", "9999", strings.Repeat("LISTENER_", 20)} {
		assert.Empty(t, Nearest(input, 3), input)
	}
}

func TestEditDistance(t *testing.T) {
	assert.Equal(t, 0, EditDistance("", ""))
	assert.Equal(t, 3, EditDistance("", "abc"))
	assert.Equal(t, 1, EditDistance("LISTNER", "LISTENER"))
	assert.Equal(t, 3, EditDistance("kitten", "sitting"))
}

// Every status word has an explanation written like the registry's.
func TestStatusWordsAreWellFormed(t *testing.T) {
	for _, w := range StatusWords {
		_, clash := codes.Lookup(w.Word)
		assert.False(t, clash, "%s is also a code", w.Word)
		for _, s := range []string{w.Meaning, w.NextStep} {
			assert.True(t, strings.HasSuffix(s, "."), w.Word)
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
		require.NoError(t, err, input)
		assert.True(t, a.IsExit, input)
		assert.Equal(t, bind.Exit, a.Exit, input)
		assert.Equal(t, []string{bind.Name}, names(a.Codes), input)
	}
	for _, input := range []string{"0x00000652", "0x652", "0x80070652", "exit code 0x00000652"} {
		a, err := Resolve(input)
		require.NoError(t, err, input)
		assert.Equal(t, 1618, a.Exit, input)
		assert.NotEmpty(t, a.Profiles, input)
	}

	// A Jamf policy log pasted whole, without ctrld-install's lines: the
	// exit status lines agree, the rest is ignored.
	a, err := Resolve("Executing Policy ctrld\nRunning script ctrld-install.sh...\nScript exit code: 41\nScript result: " + canary + "\nError running script: return code was 41.\n")
	require.NoError(t, err)
	assert.Equal(t, []string{bind.Name}, names(a.Codes))

	for _, input := range []string{
		"Script exit code: 41\nError running script: return code was 42.", // lines that disagree
		"0x", "0x123456789", "0xZZ", "exit code", "41 " + canary, "Script exit code: 41 " + canary,
		"exit code 41 and more", "code 41", "return 41",
		"Executing Policy ctrld\n41\n" + canary, // a bare number among lines may be anything
	} {
		_, err := Resolve(input)
		assert.ErrorIs(t, err, ErrUnknown, input)
		if err != nil {
			assert.NotContains(t, err.Error(), canary)
		}
	}
}

// Exit 126 is also a shell's "cannot execute": the answer says so, how to
// tell the two apart, and what the profiles do with a real refusal, all
// from the registry and the profiles.
func TestExplain126(t *testing.T) {
	t.Parallel()
	pin, ok := codes.ByExit(126)
	require.True(t, ok)
	for _, input := range []string{"126", "exit code 126", "Script exit code: 126", "0x7e"} {
		a, err := Resolve(input)
		require.NoError(t, err, input)
		require.NotNil(t, a.Shell, input)
		assert.Equal(t, []string{pin.Name}, names(a.Codes))
		var b bytes.Buffer
		require.NoError(t, WriteAnswer(&b, a))
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
			assert.Contains(t, out, want, input)
		}
		assert.NotContains(t, out, "--exit-profile "+string(profile.Default)+" reports")
	}
	// The name is not ambiguous: ctrld-install printed it.
	a, err := Resolve(pin.Name)
	require.NoError(t, err)
	assert.Nil(t, a.Shell)
	// Nor is any other exit status.
	a, err = Resolve("41")
	require.NoError(t, err)
	assert.Nil(t, a.Shell)
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
		require.NoError(t, err, input)
		var b bytes.Buffer
		require.NoError(t, WriteAnswer(&b, a))
		for _, leak := range []string{canary, strings.ToLower(canary), canary[:12]} {
			assert.NotContains(t, b.String(), leak, input)
		}
	}
}
