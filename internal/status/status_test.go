package status

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A record may carry any valid semver as installer_version; status shows
// it as the display rules render it, never its own pre-release text.
func TestStatusNeverRepeatsTheRecordsVersionText(t *testing.T) {
	home := t.TempDir()
	body := `{"version":1,"timestamp":"2026-11-30T12:00:00Z","result":"ok","action":"provisioned","stage":"","code":"OK",` +
		`"exit_code":0,"class":"ok","source":"post-conditions","attempts":1,"elapsed_ms":5,"ctrld_version":"1.5.0",` +
		`"installer_version":"0.2.0-k3x9pq2mzrcanary","result_file":"absent"}`
	require.NoError(t, os.WriteFile(filepath.Join(home, "ctrld-install-result.json"), []byte(body), 0o644))
	r := Load(home, func(string) bool { return false })
	require.Equal(t, Final, r.State)
	var out bytes.Buffer
	require.NoError(t, r.WriteJSON(&out))
	assert.NotContains(t, out.String(), "k3x9pq2mzrcanary")
	var m map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &m))
	assert.Equal(t, "0.2.0-prerelease", m["installer_version"])
	assert.Equal(t, "OK", r.Word())
}
