package codes

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite docs/provisioning-failure-codes.md from the registry")

const docPath = "../../docs/provisioning-failure-codes.md"

// The Support mapping is generated from the registry; this fails when the
// committed file and the registry differ.
func TestMarkdownDoc(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, WriteMarkdown(&b))
	if *update {
		require.NoError(t, os.WriteFile(docPath, b.Bytes(), 0o644))
	}
	got, err := os.ReadFile(docPath)
	require.NoError(t, err)
	assert.Equal(t, b.String(), string(got), "docs/provisioning-failure-codes.md is out of date: go test ./internal/codes -run TestMarkdownDoc -update")
	for _, c := range All() {
		assert.Contains(t, string(got), "| `"+c.Name+"` |")
	}
}
