package decide

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
)

// The captures of released ctrld, as internal/parse keeps them with what
// each should come to (its README describes index.json).
var capturesDir = filepath.Join("..", "parse", "testdata", "captures")

var trailerExit = regexp.MustCompile(`(?m)^### (?:start )?exit=(\d+)`)

// startEvidence is what a run of ctrld start that printed the capture's
// output and exited with its trailer's status gives Decide: the output
// goes through the classifier as the runner hands it over, line by line.
func startEvidence(t *testing.T, file string) Evidence {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(capturesDir, file))
	if err != nil {
		t.Fatal(err)
	}
	m := trailerExit.FindSubmatch(raw)
	if m == nil {
		t.Fatalf("%s: no exit status in the trailer", file)
	}
	exit, _ := strconv.Atoi(string(m[1]))
	output := raw
	if i := bytes.Index(raw, []byte("\n### ")); i >= 0 {
		output = raw[:i]
	}
	cl := parse.NewClassifier()
	cl.SetOwnFlags(parse.FeatureCdOrg, parse.FeatureCd)
	for _, l := range bytes.Split(output, []byte("\n")) {
		cl.Line(l)
	}
	ev := Evidence{Ran: RanStart, ExitCode: exit}
	if c, ok := cl.Result(); ok {
		ev.Legacy = &c
	}
	ev.UnknownFlag, ev.OwnFlag = cl.UnknownFlag()
	return ev
}

// ctrld 1.5.0's start over a healthy service while the API never answers:
// it gives up on the daemon's PIN check after 30 s and exits 126 having
// stopped nothing. No PIN was refused: the API did not answer, retryable.
func TestCapturedPinCheckWithoutAnswerIsTheAPI(t *testing.T) {
	ev := startEvidence(t, "ctrld-1.5.0-change-api-hang.txt")
	if ev.ExitCode != 126 {
		t.Fatalf("the capture's exit status is %d, want 126", ev.ExitCode)
	}
	c, src := Decide(ev)
	if c.Name != codes.APIUnreachable || src != outcome.SourceLegacyOutput {
		t.Errorf("Decide() = %s from %v, want %s from %v", c.Name, src, codes.APIUnreachable, outcome.SourceLegacyOutput)
	}
	if c.Class != codes.ClassRetryable {
		t.Errorf("%s is %s, want retryable: the next attempt may find the API answering", c.Name, c.Class)
	}
	// The same output when the run's own deadline stopped ctrld: the time
	// limit, not the API and not a PIN.
	ev.TimedOut = true
	if c, _ := Decide(ev); c.Name != codes.CtrldTimeout {
		t.Errorf("Decide(timed out) = %s, want %s", c.Name, codes.CtrldTimeout)
	}
}

// A PIN the daemon refused keeps its code. ctrld 1.5.0's start sends no PIN,
// so a daemon with one set answers 400 and start prints this line (its
// source, cmd/cli/cli.go checkDeactivationPin, and Control D's documentation
// show it); a wrong PIN (403) prints "deactivation pin is invalid" with no
// error.
func TestPinRefusalKeepsItsCode(t *testing.T) {
	for _, line := range []string{
		"\x1b[90mApr  3 15:51:23.000\x1b[0m \x1b[31mERR\x1b[0m \x1b[1mdeactivation pin is required to stop or uninstall the service\x1b[0m",
		"\x1b[90mApr  3 15:51:23.000\x1b[0m \x1b[31mERR\x1b[0m \x1b[1mdeactivation pin is invalid\x1b[0m",
	} {
		cl := parse.NewClassifier()
		cl.Line([]byte(line))
		ev := Evidence{Ran: RanStart, ExitCode: 126}
		if c, ok := cl.Result(); ok {
			ev.Legacy = &c
		}
		c, src := Decide(ev)
		if c.Name != codes.DeactivationPinRequired || src != outcome.SourceExitStatus {
			t.Errorf("Decide(%q) = %s from %v, want %s from %v", parse.StripANSI([]byte(line)), c.Name, src, codes.DeactivationPinRequired, outcome.SourceExitStatus)
		}
	}
}

// Every capture that failed comes to the code its index entry names, with
// the evidence ctrld's output alone gives.
func TestCapturesDecide(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(capturesDir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var index struct {
		Captures []struct {
			File string `json:"file"`
			Exit int    `json:"exit"`
			Code string `json:"code"`
		} `json:"captures"`
	}
	if err := json.Unmarshal(raw, &index); err != nil {
		t.Fatal(err)
	}
	if len(index.Captures) == 0 {
		t.Fatal("no captures")
	}
	for _, e := range index.Captures {
		if e.Exit == 0 {
			continue // exit 0 is decided by the device's post-conditions
		}
		t.Run(e.File, func(t *testing.T) {
			if c, _ := Decide(startEvidence(t, e.File)); c.Name != e.Code {
				t.Errorf("Decide() = %s, want %s", c.Name, e.Code)
			}
		})
	}
}
