package explain

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/fleet"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
	"github.com/Control-D-Inc/ctrld-install/internal/status"
)

func explainText(t *testing.T, input string) (Answer, string) {
	t.Helper()
	a, err := Resolve(input)
	if err != nil {
		t.Fatalf("Resolve(%q): %v", input, err)
	}
	var b bytes.Buffer
	if err := WriteAnswer(&b, a); err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{canary, strings.ToLower(canary), canary[:12]} {
		if strings.Contains(b.String(), leak) {
			t.Errorf("WriteAnswer(%q) repeats the input:\n%s", input, b.String())
		}
	}
	if c := fleet.NewCounter(); c.Read(strings.NewReader(b.String())) == nil && c.Summary().Outcomes != 0 {
		t.Errorf("WriteAnswer(%q) wrote what summarize counts as an outcome:\n%s", input, b.String())
	}
	return a, b.String()
}

func words(ws []states.State) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Word)
	}
	return out
}

// Every final line of every command, for every code and action, and every
// other line ctrld-install prints, is explained: by the code or state it
// reports and by what kind of line it is.
func TestExplainEveryLineTheBinaryPrints(t *testing.T) {
	t.Parallel()
	var lines []string
	for _, c := range codes.All() {
		for _, cmd := range []outcome.Command{outcome.Install, outcome.Verify, outcome.Uninstall} {
			for _, act := range []outcome.Action{outcome.ActionNone, outcome.ActionProvisioned, outcome.ActionSkipped, outcome.ActionUpgraded, outcome.ActionUninstalled, outcome.ActionNotInstalled} {
				if act == outcome.ActionNotInstalled && (cmd != outcome.Verify || c.Name != codes.ServiceNotRegistered) {
					continue // only verify finds a device not installed, and says 54
				}
				o := outcome.Outcome{Command: cmd, Code: c, Action: act, Attempts: 1}
				for _, l := range o.Lines() {
					lines = append(lines, report.Prefix+l)
				}
			}
		}
	}
	lines = append(lines,
		report.Prefix+outcome.LineRepaired,
		report.Prefix+"running ctrld start (ctrld 1.5.0, attempt 1 of 3, time left 5m0s)",
		report.Prefix+"running ctrld start (ctrld version unknown, attempt 2 of 3, time left 4m1s)",
		report.Prefix+"running ctrld restart (ctrld 1.5.1 replaces 1.5.0, time left 5m0s)",
		report.Prefix+"running ctrld uninstall (ctrld 1.5.0, time left 2m0s)",
		report.Prefix+"still waiting for ctrld start (30s of 5m0s)",
		report.Prefix+"attempt 1 failed: stage=bootstrap code=API_UNREACHABLE (exit 31); retrying in 10s",
		report.Prefix+"error: the home directory (--home) cannot hold the run lock and the outcome record; continuing without them",
		report.Prefix+"warning: 1 file(s) could not be read to the end; the summary leaves out what they hold",
		report.Prefix+"run started: ctrld-install 0.2.0, command install, exit profile jamf, pid 4242",
		report.Prefix+"last run 2026-11-29T10:14:03Z, 1 attempt(s), 812 ms",
		report.Prefix+states.LineNeverRun,
		report.Prefix+states.LineInvalidRecord,
		report.Prefix+"a run is in progress: phase ctrld-running, pid 4242, since 2026-11-29T10:14:03Z",
		report.Prefix+"the run of 2026-11-29T10:14:03Z was interrupted during phase checking",
		report.Prefix+"plan: the service is registered but not running",
		report.Prefix+"dry run: would repair (exit 0)",
		report.Prefix+"dry run: nothing to do (exit 0)",
		"ctrld-install-kandji: not installed: no ctrld-install at /usr/local/bin/ctrld-install; the package will be installed",
		"ctrld-install-jamf: error: parameter 6 has the unknown key colour=; the keys are timeout=, retries=",
	)
	for _, w := range states.All {
		lines = append(lines, "<result>"+w.Word+"</result>")
	}
	for _, c := range codes.All() {
		lines = append(lines, "<result>"+c.Name+"</result>")
	}
	for _, l := range lines {
		a, _ := explainText(t, l+" "+canary)
		if len(a.Lines)+len(a.Codes)+len(a.Words) == 0 {
			t.Errorf("explain %q says nothing about it", l)
		}
	}
}

func TestExplainLineMeanings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		input string
		line  string // the kind's fixed text
		codes []string
		words []string
	}{
		{report.Prefix + outcome.LineProvisioned, outcome.LineProvisioned, []string{codes.OK}, nil},
		{report.Prefix + outcome.LineSkipped, outcome.LineSkipped, []string{codes.OK}, nil},
		{report.Prefix + outcome.LineUpgraded, outcome.LineUpgraded, []string{codes.OK}, nil},
		{report.Prefix + outcome.LineRepaired, outcome.LineRepaired, []string{codes.OK}, nil},
		{report.Prefix + outcome.LineUninstalled, outcome.LineUninstalled, nil, []string{states.Uninstalled}},
		{report.Prefix + outcome.LineNothingToRemove, outcome.LineNothingToRemove, nil, []string{states.Uninstalled}},
		{report.Prefix + outcome.LineVerified, outcome.LineVerified, []string{codes.OK}, nil},
		{report.Prefix + "not installed (exit 54)", "not installed (exit 54)", nil, []string{states.NotInstalled}},
		{"2026-11-29T10:14:03Z " + report.Prefix + "verify failed: stage=service code=SERVICE_NOT_RUNNING (exit 55)", "verify failed: stage=… code=… (exit …)", []string{codes.ServiceNotRunning}, nil},
		{report.Prefix + "next step: " + codes.Must(codes.ListenerBindFailed).NextStep, "next step: …", []string{codes.ListenerBindFailed}, nil},
		{report.Prefix + "the run of 2026-11-29T10:14:03Z was interrupted during phase started", "the run of … was interrupted during phase …", []string{codes.InstallerInterrupted}, nil},
		{report.Prefix + states.LineNeverRun, states.LineNeverRun, nil, []string{states.NeverRun}},
		{report.Prefix + status.LineNextTry + "2026-11-29T10:29:03Z", status.LineNextTry + "…", nil, nil},
		{report.Prefix + "running ctrld restart (ctrld 1.4.0, time left 4m58s)", "running ctrld restart (ctrld …, time left …)", nil, nil},
		{report.Prefix + "running systemctl restart of ctrld's unit (ctrld 1.4.0, time left 4m58s)", "running systemctl restart of ctrld's unit (ctrld …, time left …)", nil, nil},
		// verify's --json on a device never provisioned is a state, not
		// the code install uses for exit 54.
		{`{"result":"not-installed","action":"not-installed","stage":"service","code":"SERVICE_NOT_REGISTERED","exit_code":54,"class":"fatal"}`, "", nil, []string{states.NotInstalled}},
		{`{"version":1,"result":"ok","action":"uninstalled","stage":"","code":"OK","exit_code":0,"class":"ok"}`, "", nil, []string{states.Uninstalled}},
		{`{"version":1,"result":"running","phase":"started","pid":42}`, "", nil, []string{states.Running}},
	} {
		a, out := explainText(t, tc.input)
		var shown []string
		for _, l := range a.Lines {
			shown = append(shown, l.Shown)
		}
		if tc.line != "" && !slices.Contains(shown, tc.line) {
			t.Errorf("explain %q: lines %q, want %q", tc.input, shown, tc.line)
		}
		if got := names(a.Codes); !slices.Equal(got, tc.codes) {
			t.Errorf("explain %q: codes %q, want %q", tc.input, got, tc.codes)
		}
		if got := words(a.Words); !slices.Equal(got, tc.words) {
			t.Errorf("explain %q: states %q, want %q", tc.input, got, tc.words)
		}
		if tc.line != "" && !strings.Contains(out, "the line \""+tc.line+"\" (ctrld-install's)\n  meaning:") {
			t.Errorf("explain %q wrote:\n%s\nwant the line's meaning", tc.input, out)
		}
	}
}

// Exit 54 is SERVICE_NOT_REGISTERED from install, and from verify or a
// detection script (the Kandji audit exits with verify's status) the state
// NOT_INSTALLED; the answer says both, the state first.
func TestExplain54(t *testing.T) {
	t.Parallel()
	for _, input := range []string{"54", "exit code 54", "Script exit code: 54"} {
		a, out := explainText(t, input)
		if a.Check == nil || a.Check.State.Word != states.NotInstalled {
			t.Fatalf("explain %q: Check = %+v, want NOT_INSTALLED", input, a.Check)
		}
		state := strings.Index(out, "means NOT_INSTALLED: a state, not a failure")
		code := strings.Index(out, "\n"+codes.ServiceNotRegistered+"\n")
		if state < 0 || code < 0 || state > code {
			t.Errorf("explain %q wrote:\n%s\nwant NOT_INSTALLED explained, then SERVICE_NOT_REGISTERED", input, out)
		}
		for _, want := range []string{"Kandji audit", mustWord(states.NotInstalled).NextStep} {
			if !strings.Contains(out, want) {
				t.Errorf("explain %q wrote:\n%s\nwant %q", input, out, want)
			}
		}
	}
	// Another exit status has no such note.
	if a, _ := explainText(t, "55"); a.Check != nil {
		t.Errorf("explain 55: Check = %+v, want none", a.Check)
	}
}

// The IME log's "lpExitCode N" is the install command's exit status.
func TestExplainIMEExitCode(t *testing.T) {
	t.Parallel()
	for _, input := range []string{
		"[Win32App] lpExitCode 41",
		`<![LOG[[Win32App] lpExitCode 41]LOG]!><time="10:14:03.1234567" date="11-29-2026" component="AppActionProcessor" context="" type="1" thread="12" file="">`,
		"<![LOG[[Win32App] lpExitCode 41]LOG]!>\n<![LOG[[Win32App] Admin did NOT set mapping for lpExitCode: 41 of app: " + canary + "]LOG]!>",
	} {
		a, out := explainText(t, input)
		if !a.FromIME || a.Exit != 41 || !slices.Equal(names(a.Codes), []string{codes.ListenerBindFailed}) {
			t.Errorf("explain %q: FromIME %v, exit %d, codes %q; want the IME's 41, LISTENER_BIND_FAILED", input, a.FromIME, a.Exit, names(a.Codes))
		}
		if !strings.Contains(out, "lpExitCode 41 in the Intune Management Extension's log is the exit status") {
			t.Errorf("explain %q wrote:\n%s", input, out)
		}
	}
	a, out := explainText(t, "[Win32App] lpExitCode 1618")
	if a.Exit != 1618 || len(a.Profiles) == 0 || !strings.Contains(out, "--exit-profile intune") {
		t.Errorf("explain lpExitCode 1618 wrote:\n%s", out)
	}
	if _, err := Resolve("lpExitCode 41\nlpExitCode 42"); !errors.Is(err, ErrUnknown) {
		t.Errorf("explain of two lpExitCode lines that disagree = %v, want %v", err, ErrUnknown)
	}
}

// What Intune reports about the Win32 app itself, in the forms its console
// and exports show, cites Microsoft's page and says what it means here.
func TestExplainIntuneStatus(t *testing.T) {
	t.Parallel()
	for _, input := range []string{
		"0x87D1041C", "0x87d1041c", "-2016345060", "Error code: 0x87D1041C",
		"The application was not detected after installation completed successfully (0x87D1041C)",
		"Error code -2016345060 " + canary,
	} {
		a, out := explainText(t, input)
		if a.Intune == nil || a.Intune.Hex != 0x87D1041C {
			t.Fatalf("explain %q: Intune = %+v, want 0x87D1041C", input, a.Intune)
		}
		for _, want := range []string{"0x87D1041C (-2016345060)", "not detected after installation completed successfully", "detect.ps1", "https://learn.microsoft.com/"} {
			if !strings.Contains(out, want) {
				t.Errorf("explain %q wrote:\n%s\nwant %q", input, out, want)
			}
		}
	}
	for _, st := range intuneStatuses {
		if !strings.HasPrefix(st.Source, "https://learn.microsoft.com/") {
			t.Errorf("0x%08X cites %q, want Microsoft's documentation", st.Hex, st.Source)
		}
	}
	// An unlisted 0x87D... number is not guessed at.
	if _, err := Resolve("0x87D10000"); !errors.Is(err, ErrUnknown) {
		t.Errorf("explain 0x87D10000 = %v, want %v", err, ErrUnknown)
	}
}

// An uninstall refused for its PIN gets uninstall's advice, which tells a
// missing PIN from a wrong one where ctrld's own line says which.
func TestExplainUninstallPIN(t *testing.T) {
	t.Parallel()
	pin := codes.Must(codes.DeactivationPinRequired)
	line := report.Prefix + codes.FailureLine(codes.VerbUninstall, pin)
	for _, tc := range []struct {
		input          string
		missing, wrong bool
		advice         string
	}{
		{line, false, false, "If the uninstall ran without --pin-file or --pin-stdin"},
		{"Apr  3 15:51:23.000 ERR deactivation pin is required to stop or uninstall the service\n" + line, true, false, uninstallMissingPIN},
		{report.Prefix + "running ctrld uninstall (ctrld 1.5.0, time left 2m0s)\nERR deactivation pin is invalid --pin " + canary, false, true, uninstallWrongPIN},
	} {
		a, out := explainText(t, tc.input)
		if a.PIN == nil || a.PIN.Missing != tc.missing || a.PIN.Wrong != tc.wrong {
			t.Errorf("explain %q: PIN = %+v, want missing %v, wrong %v", tc.input, a.PIN, tc.missing, tc.wrong)
		}
		if !strings.Contains(out, tc.advice) || !strings.Contains(out, pin.Name+" (on uninstall)") {
			t.Errorf("explain %q wrote:\n%s\nwant uninstall's advice %q", tc.input, out, tc.advice)
		}
		if strings.Contains(out, pin.NextStep) {
			t.Errorf("explain %q wrote:\n%s\nwant uninstall's advice, not the install's %q", tc.input, out, pin.NextStep)
		}
	}
	// ctrld start over a protected ctrld says "invalid" too: that is the
	// install's refusal, with the install's advice.
	a, out := explainText(t, "ERR deactivation pin is invalid")
	if a.PIN != nil || !strings.Contains(out, pin.NextStep) {
		t.Errorf("explain of ctrld's invalid-PIN line alone: PIN = %+v, wrote:\n%s\nwant the install's advice", a.PIN, out)
	}
	// The install's failure line keeps the install's advice.
	if a, _ := explainText(t, report.Prefix+codes.FailureLine(codes.VerbProvisioning, pin)); a.PIN != nil {
		t.Errorf("explain of install's PIN line: PIN = %+v, want none", a.PIN)
	}
}

// Suggestions are made only for what looks like a code.
func TestNearestOnlyForCodes(t *testing.T) {
	t.Parallel()
	for _, input := range []string{"1", "exit 1", "0", "20", "70", "255", "Script result: hello world", "the install did not work", "42 devices failed", "0x1"} {
		if near := Nearest(input, 3); len(near) != 0 {
			t.Errorf("Nearest(%q) = %q, want none: it does not look like a code", input, names(near))
		}
	}
	for input, first := range map[string]string{"43": codes.ListenerConfiguredAddrUnavailable, "LISTNER_BIND_FAILD": codes.ListenerBindFailed, "<result>LISTENER_BIND_FAILD</result>": codes.ListenerBindFailed, "servce not runing": codes.ServiceNotRunning} {
		if near := Nearest(input, 3); len(near) == 0 || near[0].Name != first {
			t.Errorf("Nearest(%q) = %q, want %s first", input, names(near), first)
		}
	}
}
