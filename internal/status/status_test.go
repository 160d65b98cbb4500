package status

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A record may carry any valid semver as installer_version; status shows
// it as the display rules render it, never its own pre-release text.
func TestStatusNeverRepeatsTheRecordsVersionText(t *testing.T) {
	home := t.TempDir()
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
