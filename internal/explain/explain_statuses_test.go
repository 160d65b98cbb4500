package explain

import (
	"bytes"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/plan"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
)

// Every reason the planner gives, over every observation and request, is
// a plan line explain knows by itself, not only as "plan: …", and its
// meaning names the action the plan takes.
func TestExplainKnowsEveryPlanReason(t *testing.T) {
	t.Parallel()
	sames := []parse.Same{parse.SameUnknown, parse.SameYes, parse.SameNo}
	lasts := []plan.Last{plan.LastNone, plan.LastOK, plan.LastFailed}
	seen := map[string]bool{}
	for _, reg := range []bool{false, true} {
		for _, run := range []bool{false, true} {
			for _, bin := range sames {
				for _, res := range sames {
					for _, tok := range sames {
						for _, fl := range sames {
							for _, path := range sames {
								for _, last := range lasts {
									for _, secret := range []bool{false, true} {
										for _, force := range []bool{false, true} {
											for _, flags := range []int{0, 1, 2, 3, 4, 5, 6, 7} {
												o := plan.Observation{Registered: reg, Running: run, Binary: bin, Resolver: res, Token: tok, Flags: fl, Path: path, Last: last,
													Silent: flags&1 != 0, RefusedBuild: flags&2 != 0, RefusedRequest: flags&4 != 0}
												p := plan.Decide(o, plan.Request{Secret: secret, Force: force})
												seen[p.Reason+"\x00"+p.Action.String()] = true
											}
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
	words := map[plan.Action]string{plan.Provision: "provisions", plan.Repair: "repairs", plan.Upgrade: "upgrades", plan.Nothing: "does nothing"}
	for key := range seen {
		reason, action, _ := strings.Cut(key, "\x00")
		line := report.Prefix + "plan: " + reason
		a, err := Resolve(line)
		if err != nil {
			t.Errorf("explain %q: %v", line, err)
			continue
		}
		if len(a.Lines) != 1 || a.Lines[0].Shown == "plan: …" {
			t.Errorf("explain %q: lines %+v, want the plan line's own meaning", line, a.Lines)
			continue
		}
		var want string
		for act, w := range words {
			if act.String() == action {
				want = w
			}
		}
		if !strings.Contains(a.Lines[0].Meaning, want) {
			t.Errorf("explain %q: meaning %q does not say the run %s", line, a.Lines[0].Meaning, want)
		}
		if !strings.Contains(a.Lines[0].Meaning, "Every install that acts prints its plan line") {
			t.Errorf("explain %q: meaning %q does not say every install that acts prints it", line, a.Lines[0].Meaning)
		}
	}
	// A plan line the planner may print one day is still a plan line.
	a, err := Resolve(report.Prefix + "plan: a reason not written yet")
	if err != nil || len(a.Lines) != 1 || a.Lines[0].Shown != "plan: …" || strings.Contains(a.Lines[0].Meaning, "Nothing was changed") {
		t.Errorf("explain of an unknown plan line: %+v, %v", a.Lines, err)
	}
}

// Numbers explain is given by the tools around ctrld-install: the shells'
// and the scripts' statuses, Intune's 32-bit statuses signed and in hex,
// FileWave's negative statuses.
func TestExplainStatusesAroundCtrldInstall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		input    string
		shell    int // the shell's or script's status explained, 0 for none
		codes    []string
		intune   uint32
		filewave int
		exit     int // the exit status read, when it is one
	}{
		{input: "60", shell: 60, codes: []string{codes.InstallerFailed}, exit: 60},
		{input: "Script exit code: 60", shell: 60, codes: []string{codes.InstallerFailed}, exit: 60},
		{input: "126", shell: 126, codes: []string{codes.DeactivationPinRequired}, exit: 126},
		{input: "127", shell: 127, exit: 127},
		{input: "exit status 127", shell: 127, exit: 127},
		{input: "129", shell: 129, exit: 129},
		{input: "130", shell: 130, exit: 130},
		{input: "137", shell: 137, exit: 137},
		{input: "143", shell: 143, exit: 143},
		{input: "-2016345060", intune: 0x87D1041C},
		{input: "0x87D1041C", intune: 0x87D1041C},
		{input: "0x87d1041c", intune: 0x87D1041C},
		{input: "-1000", filewave: -1000, exit: -1000},
		{input: "-1001", filewave: -1001, exit: -1001},
		{input: "exit code -1002", filewave: -1002, exit: -1002},
		{input: "(-1003)", filewave: -1003, exit: -1003},
		{input: "-2147023278", exit: 1618}, // 0x80070652 signed
	} {
		a, err := Resolve(tc.input)
		if err != nil {
			t.Errorf("Resolve(%q): %v", tc.input, err)
			continue
		}
		if got := names(a.Codes); !slices.Equal(got, tc.codes) && (len(got) > 0 || len(tc.codes) > 0) {
			t.Errorf("Resolve(%q) codes = %q, want %q", tc.input, got, tc.codes)
		}
		switch {
		case tc.shell == 0 && a.Shell != nil:
			t.Errorf("Resolve(%q): Shell = %d, want none", tc.input, a.Shell.Exit)
		case tc.shell != 0 && (a.Shell == nil || a.Shell.Exit != tc.shell):
			t.Errorf("Resolve(%q): Shell = %+v, want %d", tc.input, a.Shell, tc.shell)
		}
		if (a.Intune != nil) != (tc.intune != 0) || a.Intune != nil && a.Intune.Hex != tc.intune {
			t.Errorf("Resolve(%q): Intune = %+v, want %#x", tc.input, a.Intune, tc.intune)
		}
		if (a.FileWave != nil) != (tc.filewave != 0) || a.FileWave != nil && a.FileWave.Status != tc.filewave {
			t.Errorf("Resolve(%q): FileWave = %+v, want %d", tc.input, a.FileWave, tc.filewave)
		}
		if tc.exit != 0 && (!a.IsExit || a.Exit != tc.exit) {
			t.Errorf("Resolve(%q): exit %d (%v), want %d", tc.input, a.Exit, a.IsExit, tc.exit)
		}
		var b bytes.Buffer
		if err := WriteAnswer(&b, a); err != nil {
			t.Fatal(err)
		}
		if a.FileWave != nil && !strings.Contains(b.String(), fileWaveScriptStatuses) {
			t.Errorf("explain %s does not cite FileWave's page:\n%s", tc.input, b.String())
		}
	}
	// A negative number no tool is known to report is not guessed at.
	for _, input := range []string{"-5", "-1004", "-999999"} {
		if _, err := Resolve(input); !errors.Is(err, ErrUnknown) {
			t.Errorf("Resolve(%q): %v, want ErrUnknown", input, err)
		}
	}
	// 60 is the script's first: that is what it most often is.
	a, _ := Resolve("60")
	var b bytes.Buffer
	if err := WriteAnswer(&b, a); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if i, j := strings.Index(out, "not installed where they look"), strings.Index(out, codes.InstallerFailed+"\n"); i < 0 || j < 0 || i > j {
		t.Errorf("explain 60 does not say the script's meaning first:\n%s", out)
	}
}

// No text explain or the registry shows asks for ctrld to be run by hand:
// ctrld prints the provisioning token in its messages.
func TestNothingAsksToRunCtrldByHand(t *testing.T) {
	t.Parallel()
	var texts []string
	for _, c := range codes.All() {
		texts = append(texts, c.Scenario, c.NextStep, c.UninstallNextStep, c.Evidence)
	}
	for _, k := range allLineKinds {
		texts = append(texts, k.Meaning)
	}
	for _, w := range states.All {
		texts = append(texts, w.Meaning, w.NextStep)
	}
	for _, s := range shellStatuses {
		texts = append(texts, s.Meaning, s.TellApart, s.Check)
	}
	for _, s := range fileWaveStatuses {
		texts = append(texts, s.Meaning, s.NextStep)
	}
	for _, s := range intuneStatuses {
		texts = append(texts, s.Meaning, s.NextStep)
	}
	runsCtrld := regexp.MustCompile(`(?i)\brun(ning)? ctrld\s[^.]*by hand|by hand[^.]*\bctrld start\b`)
	for _, text := range texts {
		for _, sentence := range strings.SplitAfter(text, ". ") {
			if runsCtrld.MatchString(sentence) && !strings.Contains(strings.ToLower(sentence), "do not") {
				t.Errorf("asks for ctrld to be run by hand: %q", sentence)
			}
		}
	}
}

// The plan lines a transaction and a paused request print are known by
// themselves, as install prints them.
func TestExplainKnowsTheTransactionsPlanLines(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		plan.ReasonNoRollback + "the ctrld build that runs was replaced on disk before it was kept",
		plan.ReasonCutShortHealthy,
		plan.ReasonCutShortUnhealthy,
		plan.ReasonBuildFirst,
		plan.ReasonPaused + " (API_REJECTED); it is sent again from 2026-12-03T16:05:00Z, or now with --force, another request or another ctrld build",
	} {
		a, err := Resolve(report.Prefix + "plan: " + line)
		if err != nil || len(a.Lines) != 1 || a.Lines[0].Shown == "plan: …" {
			t.Errorf("explain %q: %+v, %v", line, a, err)
		}
	}
}
