package explain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/fleet"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
)

func TestCodesMarkdownIsTheGeneratedDoc(t *testing.T) {
	var got, want bytes.Buffer
	if err := WriteCodes(&got, "markdown"); err != nil {
		t.Fatalf("WriteCodes(markdown): %v", err)
	}
	if err := codes.WriteMarkdown(&want); err != nil {
		t.Fatalf("codes.WriteMarkdown: %v", err)
	}
	if got.String() != want.String() {
		t.Errorf("WriteCodes(markdown) wrote:\n%s\nwant codes.WriteMarkdown's:\n%s", got.String(), want.String())
	}
}

func TestCodesText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCodes(&b, "text"); err != nil {
		t.Fatalf("WriteCodes(text): %v", err)
	}
	blocks := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n\n")
	all := codes.All()
	if len(blocks) != len(all) {
		t.Fatalf("WriteCodes(text) wrote %d blocks, want %d, one per code", len(blocks), len(all))
	}
	for i, c := range all {
		lines := strings.Split(blocks[i], "\n")
		if lines[0] != c.Name {
			t.Errorf("block %d starts %q, want %q", i, lines[0], c.Name)
		}
		stage := string(c.Stage)
		if stage == "" {
			stage = "-"
		}
		want := []string{
			"  stage:      " + stage,
			fmt.Sprintf("  exit:       %d", c.Exit),
			fmt.Sprintf("  class:      %s (%s)", c.Class, ClassMeaning(c.Class)),
			"  scenario:   " + c.Scenario,
			"  next step:  " + c.NextStep,
		}
		if c.UninstallNextStep != "" {
			want = append(want, "  uninstall:  "+c.UninstallNextStep)
		}
		want = append(want,
			"  evidence:   "+c.Evidence,
			"  since:      "+c.Since,
			"  deprecated: no",
		)
		if got := lines[1:]; !slices.Equal(got, want) {
			t.Errorf("%s: block lines\n%q\nwant\n%q", c.Name, got, want)
		}
	}
}

func TestCodesJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCodes(&b, "json"); err != nil {
		t.Fatalf("WriteCodes(json): %v", err)
	}
	var got struct {
		Codes []map[string]any `json:"codes"`
	}
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("WriteCodes(json) output does not parse: %v", err)
	}
	all := codes.All()
	if len(got.Codes) != len(all) {
		t.Fatalf("WriteCodes(json) listed %d codes, want %d", len(got.Codes), len(all))
	}
	for i, c := range all {
		want := map[string]any{
			"code": c.Name, "stage": string(c.Stage), "exit_code": float64(c.Exit), "class": string(c.Class),
			"scenario": c.Scenario, "next_step": c.NextStep, "evidence": c.Evidence,
			"since": c.Since, "deprecated": c.Deprecated,
		}
		if c.UninstallNextStep != "" {
			want["uninstall_next_step"] = c.UninstallNextStep
		}
		if !reflect.DeepEqual(got.Codes[i], want) {
			t.Errorf("WriteCodes(json) code %d = %v, want %v", i, got.Codes[i], want)
		}
	}
}

func TestCodesUnknownFormat(t *testing.T) {
	if err := WriteCodes(&bytes.Buffer{}, "xml"); err == nil {
		t.Errorf("WriteCodes(xml) = nil, want an error")
	}
}

// Every class has a meaning, so no code prints an empty parenthesis.
func TestClassMeanings(t *testing.T) {
	for _, c := range codes.All() {
		if ClassMeaning(c.Class) == "" {
			t.Errorf("%s: ClassMeaning(%q) is empty", c.Name, c.Class)
		}
	}
}

func TestDeprecatedCodeBlock(t *testing.T) {
	c := codes.Must(codes.ListenerFailed)
	c.Deprecated = true
	var b strings.Builder
	writeCodeBlock(&b, c)
	if !strings.Contains(b.String(), "  deprecated: yes") {
		t.Errorf("writeCodeBlock of a deprecated code wrote:\n%s\nwant a line %q", b.String(), "  deprecated: yes")
	}
}

// A listing of the registry names every code but is no outcome: summarize
// must not count what codes or explain print, or a Support transcript
// saved next to the logs would skew the fleet view.
func TestOwnOutputIsNotCounted(t *testing.T) {
	c := fleet.NewCounter()
	for _, f := range CodesFormats {
		var b bytes.Buffer
		if err := WriteCodes(&b, f); err != nil {
			t.Fatalf("WriteCodes(%s): %v", f, err)
		}
		if err := c.Read(&b); err != nil {
			t.Fatalf("Read of WriteCodes(%s): %v", f, err)
		}
	}
	for _, input := range []string{"41", "1618", "0", "NEVER_RUN"} {
		a, err := Resolve(input)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", input, err)
		}
		var b bytes.Buffer
		if err := WriteAnswer(&b, a); err != nil {
			t.Fatalf("WriteAnswer(%q): %v", input, err)
		}
		if err := c.Read(&b); err != nil {
			t.Fatalf("Read of WriteAnswer(%q): %v", input, err)
		}
	}
	if got := c.Summary().Outcomes; got != 0 {
		t.Errorf("Summary().Outcomes = %d, want 0", got)
	}
}

func TestWriteAnswer(t *testing.T) {
	a, err := Resolve("Nov 29 mac installd: ctrld-install: provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41) " + canary)
	if err != nil {
		t.Fatalf("Resolve(failure line): %v", err)
	}
	var b bytes.Buffer
	if err := WriteAnswer(&b, a); err != nil {
		t.Fatalf("WriteAnswer(failure line): %v", err)
	}
	c := codes.Must(codes.ListenerBindFailed)
	for _, s := range []string{c.Scenario, c.NextStep, c.Evidence} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("WriteAnswer(failure line) wrote:\n%s\nwant it to contain %q", b.String(), s)
		}
	}
	if strings.Contains(b.String(), canary) {
		t.Errorf("WriteAnswer(failure line) repeats the canary:\n%s", b.String())
	}

	a, err = Resolve("1618")
	if err != nil {
		t.Fatalf("Resolve(1618): %v", err)
	}
	b.Reset()
	if err := WriteAnswer(&b, a); err != nil {
		t.Fatalf("WriteAnswer(1618): %v", err)
	}
	if want := "--exit-profile intune: API_UNREACHABLE (exit 31), CTRLD_TIMEOUT (exit 64), INSTALLER_BUSY (exit 66), API_RESPONSE_INVALID (exit 36)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("WriteAnswer(1618) wrote:\n%s\nwant it to contain %q", b.String(), want)
	}

	a, err = Resolve("<result>NEVER_RUN</result>")
	if err != nil {
		t.Fatalf("Resolve(<result>NEVER_RUN</result>): %v", err)
	}
	b.Reset()
	if err := WriteAnswer(&b, a); err != nil {
		t.Fatalf("WriteAnswer(<result>NEVER_RUN</result>): %v", err)
	}
	for _, want := range []string{states.All[0].Meaning, states.All[0].NextStep} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("WriteAnswer(<result>NEVER_RUN</result>) wrote:\n%s\nwant it to contain %q", b.String(), want)
		}
	}
}
