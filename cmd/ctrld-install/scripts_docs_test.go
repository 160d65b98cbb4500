package main

// The MDM guides link to each other's sections and cite vendors' pages by
// reference; a renamed heading or a missing reference would leave an admin
// at a dead link.

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// githubAnchor is the id GitHub gives a heading.
func githubAnchor(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	h = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`).ReplaceAllString(h, "")
	return strings.ReplaceAll(h, " ", "-")
}

func markdownAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	s := regexp.MustCompile("(?s)```.*?```").ReplaceAllString(string(b), "")
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#+ (.*)$`).FindAllStringSubmatch(s, -1) {
		out[githubAnchor(m[1])] = true
	}
	return out
}

func TestScriptsGuidesLinksResolve(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	docs := filepath.Join("..", "..", "docs", "mdm")
	guides, err := filepath.Glob(filepath.Join(docs, "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, guides)
	link := regexp.MustCompile(`\]\(([^)\s#]*)#([^)\s]+)\)`)
	refUse := regexp.MustCompile(`\]\[([a-z0-9-]+)\]`)
	for _, g := range guides {
		b, err := os.ReadFile(g)
		require.NoError(t, err)
		src := string(b)
		for _, m := range link.FindAllStringSubmatch(src, -1) {
			target := g
			if m[1] != "" {
				target = filepath.Join(filepath.Dir(g), m[1])
			}
			// docs/design.md is another part of the project's; its sections
			// are checked there.
			if filepath.Base(target) == "design.md" {
				continue
			}
			assert.True(t, markdownAnchors(t, target)[m[2]], "%s links to %s#%s, which has no such heading", filepath.Base(g), m[1], m[2])
		}
		for _, m := range refUse.FindAllStringSubmatch(src, -1) {
			assert.Regexp(t, `(?m)^\[`+regexp.QuoteMeta(m[1])+`\]: https?://`, src, "%s cites [%s] without its address", filepath.Base(g), m[1])
		}
	}
}

// The guides tell one story about changes: they apply without force, and
// one that fails verification is rolled back.
func TestScriptsGuidesAgreeOnForce(t *testing.T) {
	t.Parallel()
	for _, g := range []string{"README.md", "jamf.md", "intune.md", "filewave.md", "munki.md", "rmm.md", "kandji.md", "manual.md"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", "mdm", g))
		require.NoError(t, err)
		s := strings.Join(strings.Fields(string(b)), " ")
		assert.Contains(t, s, "rolled back to what ran before", g)
		assert.Contains(t, s, "(../design.md#changes-are-transactions)", g)
		assert.NotContains(t, s, "keeps its old settings", g)
		if g != "README.md" {
			assert.Contains(t, s, "(README.md#when-to-force-drift)", "%s links to When to force", g)
		}
	}
}
