package support

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

func TestCodesMarkdownIsTheGeneratedDoc(t *testing.T) {
	var got, want bytes.Buffer
	require.NoError(t, WriteCodes(&got, "markdown"))
	require.NoError(t, codes.WriteMarkdown(&want))
	assert.Equal(t, want.String(), got.String())
}

func TestCodesText(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteCodes(&b, "text"))
	blocks := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n\n")
	all := codes.All()
	require.Len(t, blocks, len(all))
	for i, c := range all {
		lines := strings.Split(blocks[i], "\n")
		assert.Equal(t, c.Name, lines[0])
		stage := string(c.Stage)
		if stage == "" {
			stage = "-"
		}
		assert.Equal(t, []string{
			"  stage:      " + stage,
			fmt.Sprintf("  exit:       %d", c.Exit),
			fmt.Sprintf("  class:      %s (%s)", c.Class, ClassMeaning(c.Class)),
			"  scenario:   " + c.Scenario,
			"  next step:  " + c.NextStep,
			"  evidence:   " + c.Evidence,
			"  since:      " + c.Since,
			"  deprecated: no",
		}, lines[1:], c.Name)
	}
}

func TestCodesJSON(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteCodes(&b, "json"))
	var got struct {
		Codes []map[string]any `json:"codes"`
	}
	require.NoError(t, json.Unmarshal(b.Bytes(), &got))
	all := codes.All()
	require.Len(t, got.Codes, len(all))
	for i, c := range all {
		assert.Equal(t, map[string]any{
			"code": c.Name, "stage": string(c.Stage), "exit_code": float64(c.Exit), "class": string(c.Class),
			"scenario": c.Scenario, "next_step": c.NextStep, "evidence": c.Evidence,
			"since": c.Since, "deprecated": c.Deprecated,
		}, got.Codes[i])
	}
}

func TestCodesUnknownFormat(t *testing.T) {
	assert.Error(t, WriteCodes(&bytes.Buffer{}, "xml"))
}

// Every class has a meaning, so no code prints an empty parenthesis.
func TestClassMeanings(t *testing.T) {
	for _, c := range codes.All() {
		assert.NotEmpty(t, ClassMeaning(c.Class), c.Name)
	}
}

func TestDeprecatedCodeBlock(t *testing.T) {
	c := codes.Must(codes.ListenerFailed)
	c.Deprecated = true
	var b strings.Builder
	writeCodeBlock(&b, c)
	assert.Contains(t, b.String(), "  deprecated: yes")
}

// A listing of the registry names every code but is no outcome: summarize
// must not count what codes or explain print, or a Support transcript
// saved next to the logs would skew the fleet view.
func TestOwnOutputIsNotCounted(t *testing.T) {
	c := NewCounter()
	for _, f := range CodesFormats {
		var b bytes.Buffer
		require.NoError(t, WriteCodes(&b, f))
		require.NoError(t, c.Read(&b))
	}
	for _, input := range []string{"41", "1618", "0", "NEVER_RUN"} {
		a, err := Resolve(input)
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, WriteAnswer(&b, a))
		require.NoError(t, c.Read(&b))
	}
	assert.Zero(t, c.Summary().Outcomes)
}

func TestWriteAnswer(t *testing.T) {
	a, err := Resolve("Nov 29 mac installd: ctrld-install: provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41) " + canary)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, WriteAnswer(&b, a))
	c := codes.Must(codes.ListenerBindFailed)
	for _, s := range []string{c.Scenario, c.NextStep, c.Evidence} {
		assert.Contains(t, b.String(), s)
	}
	assert.NotContains(t, b.String(), canary)

	a, err = Resolve("1618")
	require.NoError(t, err)
	b.Reset()
	require.NoError(t, WriteAnswer(&b, a))
	assert.Contains(t, b.String(), "--exit-profile intune: API_UNREACHABLE (exit 31), CTRLD_TIMEOUT (exit 64), INSTALLER_BUSY (exit 66)\n")

	a, err = Resolve("<result>NEVER_RUN</result>")
	require.NoError(t, err)
	b.Reset()
	require.NoError(t, WriteAnswer(&b, a))
	assert.Contains(t, b.String(), StatusWords[0].Meaning)
	assert.Contains(t, b.String(), StatusWords[0].NextStep)
}
