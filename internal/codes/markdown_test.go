package codes

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/provisioning-failure-codes.md from the registry")

const docPath = "../../docs/provisioning-failure-codes.md"

// The Support mapping is generated from the registry; this fails when the
// committed file and the registry differ.
func TestMarkdownDoc(t *testing.T) {
	var b bytes.Buffer
	if err := WriteMarkdown(&b); err != nil {
		t.Fatalf("WriteMarkdown: %v", err)
	}
	if *update {
		if err := os.WriteFile(docPath, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != b.String() {
		t.Errorf("docs/provisioning-failure-codes.md is out of date: go test ./internal/codes -run TestMarkdownDoc -update\n--- got:\n%s\n--- want:\n%s", got, b.String())
	}
	for _, c := range All() {
		if row := "| `" + c.Name + "` |"; !strings.Contains(string(got), row) {
			t.Errorf("%s has no row %q", docPath, row)
		}
	}
}

// README.md carries the exit-code table for admins; it must match the registry.
func TestReadmeTableMatchesRegistry(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		m := readmeRow.FindStringSubmatch(line)
		if m != nil {
			rows[m[1]] = m[2:]
		}
	}
	for _, c := range All() {
		row, ok := rows[c.Name]
		if !ok {
			t.Errorf("README.md has no row for %s", c.Name)
			continue
		}
		if want := []string{string(c.Stage), strconv.Itoa(c.Exit), string(c.Class)}; !slices.Equal(row, want) {
			t.Errorf("README.md row for %s = %q, want %q", c.Name, row, want)
		}
	}
	if got, want := len(rows), len(All()); got != want {
		t.Errorf("README.md has %d code rows, registry has %d codes: README.md lists a code the registry does not have", got, want)
	}
}

var readmeRow = regexp.MustCompile("^\\| `([A-Z_]+)` \\| *([a-z]*) *\\| ([0-9]+) \\| ([a-z-]+) \\|$")

// Support starts from the code: every failure code has a row in the
// troubleshooting table (docs/support.md), and the table names no other code.
func TestReadmeTroubleshootingCoversEveryCode(t *testing.T) {
	b, err := os.ReadFile("../../docs/support.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "\n## Troubleshooting by code\n")
	if start < 0 {
		t.Fatal("docs/support.md has no Troubleshooting by code section")
	}
	section := doc[start+1:]
	if end := strings.Index(section[1:], "\n## "); end >= 0 {
		section = section[:end+1]
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.HasPrefix(line, "| `") {
			continue
		}
		for _, m := range codeInCell.FindAllStringSubmatch(cells[1], -1) {
			if _, ok := Lookup(m[1]); !ok {
				t.Errorf("the troubleshooting table names %s, which is not registered", m[1])
			}
			listed[m[1]] = true
		}
	}
	for _, c := range All() {
		if !c.IsOK() && !listed[c.Name] {
			t.Errorf("the troubleshooting table in docs/support.md has no row for %s", c.Name)
		}
	}
}

var codeInCell = regexp.MustCompile("`([A-Z][A-Z_]*[A-Z])`")
