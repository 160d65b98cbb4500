package status

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/fleet"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// A record may carry any valid semver as installer_version; status shows
// it as the display rules render it, never its own pre-release text.
func TestStatusNeverRepeatsTheRecordsVersionText(t *testing.T) {
	home := wine.TempDir(t)
	body := `{"version":1,"timestamp":"2026-11-30T12:00:00Z","result":"ok","action":"provisioned","stage":"","code":"OK",` +
		`"exit_code":0,"class":"ok","source":"post-conditions","attempts":1,"elapsed_ms":5,"ctrld_version":"1.5.0",` +
		`"installer_version":"0.2.0-k3x9pq2mzrcanary","result_file":"absent"}`
	if err := os.WriteFile(filepath.Join(home, "ctrld-install-result.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	r := Load(home, func(string) bool { return false })
	if r.State != Final {
		t.Fatalf("Load: State = %v, want %v", r.State, Final)
	}
	var out bytes.Buffer
	if err := r.WriteJSON(&out); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	if strings.Contains(out.String(), "k3x9pq2mzrcanary") {
		t.Errorf("WriteJSON wrote the record's pre-release text:\n%s", out.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("WriteJSON output does not parse: %v", err)
	}
	if got, want := m["installer_version"], any("0.2.0-prerelease"); got != want {
		t.Errorf("WriteJSON: installer_version = %#v, want %#v", got, want)
	}
	if got, want := r.Word(), "OK"; got != want {
		t.Errorf("Word() = %q, want %q", got, want)
	}
}

// What status prints in every state, as text, JSON and an extension
// attribute, is what a fleet report counts as that state (and never as a
// code), so collected status output reads right.
func TestStatusOutputIsCountedAsItsState(t *testing.T) {
	running := `{"version":1,"timestamp":"2026-11-30T12:00:00Z","result":"running","stage":"","code":"","exit_code":0,"class":"","source":"","attempts":0,"elapsed_ms":0,"ctrld_version":null,"installer_version":"0.2.0","result_file":"","phase":"started","pid":42}`
	uninstalled := `{"version":1,"timestamp":"2026-11-30T12:00:00Z","result":"ok","action":"uninstalled","stage":"","code":"OK","exit_code":0,"class":"ok","source":"post-conditions","attempts":1,"elapsed_ms":5,"ctrld_version":null,"installer_version":"0.2.0","result_file":"absent"}`
	for _, tc := range []struct {
		record string // "" for none
		held   bool
		want   string
	}{
		{"", false, states.NeverRun},
		{"not a record", false, states.InvalidRecord},
		{running, true, states.Running},
		{uninstalled, false, states.Uninstalled},
	} {
		home := wine.TempDir(t)
		if tc.record != "" {
			if err := os.WriteFile(filepath.Join(home, "ctrld-install-result.json"), []byte(tc.record), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		r := Load(home, func(string) bool { return tc.held })
		var text, js bytes.Buffer
		if err := r.WriteText(&text); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		ea := "<result>" + r.Word() + "</result>\n"
		for name, out := range map[string]string{"text": text.String(), "json": js.String(), "jamf-ea": ea} {
			c := fleet.NewCounter()
			if err := c.Read(strings.NewReader(out)); err != nil {
				t.Fatal(err)
			}
			s := c.Summary()
			if len(s.Rows) != 1 || !s.Rows[0].IsState() || s.Rows[0].Name() != tc.want {
				t.Errorf("status %s of %s:\n%s\nis counted as %+v, want the state %s", name, tc.want, out, s.Rows, tc.want)
			}
		}
	}
}

// The failure line names the command that wrote the record: a failed or a
// killed uninstall is an uninstall's, with uninstall's own next step.
func TestStatusNamesTheCommand(t *testing.T) {
	for _, tc := range []struct{ name, body, want string }{
		{"a failed uninstall", `{"version":1,"timestamp":"2026-11-30T12:00:00Z","result":"failed","stage":"service","code":"DEACTIVATION_PIN_REQUIRED",` +
			`"exit_code":126,"class":"already-managed","source":"exit-status","attempts":1,"elapsed_ms":5,"ctrld_version":"1.5.0",` +
			`"installer_version":"0.2.0","result_file":"absent","command":"uninstall"}`,
			"ctrld-install: uninstall failed: stage=service code=DEACTIVATION_PIN_REQUIRED (exit 126)"},
		{"a killed uninstall", `{"version":1,"timestamp":"2026-11-30T12:00:00Z","result":"running","stage":"","code":"","exit_code":0,"class":"",` +
			`"source":"","attempts":0,"elapsed_ms":0,"ctrld_version":null,"installer_version":"0.2.0","result_file":"","command":"uninstall","phase":"ctrld-running","pid":4242}`,
			"ctrld-install: uninstall failed: stage=installer code=INSTALLER_INTERRUPTED (exit 68)"},
		{"a killed install", `{"version":1,"timestamp":"2026-11-30T12:00:00Z","result":"running","stage":"","code":"","exit_code":0,"class":"",` +
			`"source":"","attempts":0,"elapsed_ms":0,"ctrld_version":null,"installer_version":"0.2.0","result_file":"","command":"install","phase":"ctrld-running","pid":4242}`,
			"ctrld-install: provisioning failed: stage=installer code=INSTALLER_INTERRUPTED (exit 68)"},
	} {
		home := wine.TempDir(t)
		if err := os.WriteFile(filepath.Join(home, "ctrld-install-result.json"), []byte(tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := Load(home, func(string) bool { return false }).WriteText(&out); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if last := lines[len(lines)-1]; last != tc.want {
			t.Errorf("%s: last line %q, want %q", tc.name, last, tc.want)
		}
		if tc.name != "a killed install" && strings.Contains(out.String(), "run the install again") {
			t.Errorf("%s: install's next step:\n%s", tc.name, out.String())
		}
	}
}
