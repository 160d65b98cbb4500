package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docs/developing.md's Layout table names every top-level directory and
// every package directly under internal/: a new one gets a row.
func TestLayoutNamesEveryDirectory(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "developing.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "\n## Layout\n")
	if start < 0 {
		t.Fatal("docs/developing.md has no Layout section")
	}
	layout := text[start+1:]
	if end := strings.Index(layout[3:], "\n## "); end >= 0 {
		layout = layout[:end+3]
	}
	var rows []string
	for _, line := range strings.Split(layout, "\n") {
		if strings.HasPrefix(line, "| `") {
			cell := strings.SplitN(line, "|", 3)[1]
			for _, name := range strings.Split(cell, ",") {
				rows = append(rows, strings.TrimSuffix(strings.Trim(strings.TrimSpace(name), "`"), "/"))
			}
		}
	}
	named := func(dir string) bool {
		for _, r := range rows {
			if r == dir || strings.HasPrefix(r, dir+"/") {
				return true
			}
		}
		return false
	}
	var want []string
	top, err := os.ReadDir(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range top {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			want = append(want, e.Name())
		}
	}
	internal, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range internal {
		if e.IsDir() {
			want = append(want, "internal/"+e.Name())
		}
	}
	for _, dir := range want {
		if dir == "internal" {
			continue // its packages are named one by one
		}
		if !named(dir) {
			t.Errorf("docs/developing.md's Layout table does not name %s/", dir)
		}
	}
}
