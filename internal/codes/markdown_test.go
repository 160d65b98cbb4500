package codes

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"strconv"
	"strings"
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

// README.md carries the exit-code table for admins; it must match the registry.
func TestReadmeTableMatchesRegistry(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	rows := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		m := readmeRow.FindStringSubmatch(line)
		if m != nil {
			rows[m[1]] = m[2:]
		}
	}
	for _, c := range All() {
		row, ok := rows[c.Name]
		if !assert.True(t, ok, "README.md has no row for %s", c.Name) {
			continue
		}
		assert.Equal(t, []string{string(c.Stage), strconv.Itoa(c.Exit), string(c.Class)}, row, c.Name)
	}
	assert.Len(t, rows, len(All()), "README.md lists a code the registry does not have")
}

var readmeRow = regexp.MustCompile("^\\| `([A-Z_]+)` \\| *([a-z]*) *\\| ([0-9]+) \\| ([a-z-]+) \\|$")
