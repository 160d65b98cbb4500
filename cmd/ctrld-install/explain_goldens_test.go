package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/Control-D-Inc/ctrld-install/internal/explain"
)

// goldenPlaceholders are what the scripts write in place of what varies
// from run to run, and a value of each as the binary prints it.
var goldenPlaceholders = strings.NewReplacer(
	"<duration>", "4m59s",
	"<ms>", "812",
	"<timestamp>", "2026-11-29T10:14:03Z",
	"<version>", "0.2.0",
)

// reportsOfTheRegistry are the commands whose output describes codes
// rather than a device: what they print is the registry's own text, which
// explain does not explain again.
var reportsOfTheRegistry = map[string]bool{"explain": true, "codes": true, "summarize": true, "version": true, "-h": true, "--help": true}

var (
	goldenCommandRE = regexp.MustCompile(`^!?\s*ctrld-install\s+(\S+)`)
	goldenCmpRE     = regexp.MustCompile(`^cmp (stdout|stderr) (\S+)`)
)

// Every line the binary printed in the command line's golden scripts is
// one explain knows: it names a code or a state, or says what the line is.
func TestExplainEveryGoldenLine(t *testing.T) {
	t.Parallel()
	scripts, err := filepath.Glob("testdata/script/*.txtar")
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no golden scripts: %v", err)
	}
	explained := 0
	for _, path := range scripts {
		ar, err := txtar.ParseFile(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		files := map[string]string{}
		for _, f := range ar.Files {
			files[f.Name] = string(f.Data)
		}
		command := ""
		for _, line := range strings.Split(string(ar.Comment), "\n") {
			line = strings.TrimSpace(line)
			if i := strings.Index(line, "] "); strings.HasPrefix(line, "[") && i > 0 {
				line = strings.TrimSpace(line[i+2:])
			}
			if m := goldenCommandRE.FindStringSubmatch(line); m != nil {
				command = m[1]
				if strings.HasPrefix(command, "--") && !reportsOfTheRegistry[command] {
					command = "install"
				}
				continue
			}
			m := goldenCmpRE.FindStringSubmatch(line)
			if m == nil || reportsOfTheRegistry[command] {
				continue
			}
			want, ok := files[m[2]]
			if !ok {
				continue
			}
			for _, printed := range strings.Split(strings.TrimRight(want, "\n"), "\n") {
				printed = goldenPlaceholders.Replace(printed)
				a, err := explain.Resolve(printed)
				if err != nil {
					t.Errorf("%s (%s, %s): explain %q: %v", filepath.Base(path), command, m[2], printed, err)
					continue
				}
				if len(a.Lines)+len(a.Codes)+len(a.Words) == 0 {
					t.Errorf("%s (%s, %s): explain %q says nothing about it", filepath.Base(path), command, m[2], printed)
				}
				explained++
			}
		}
	}
	t.Logf("%d printed lines explained", explained)
	if explained < 40 {
		t.Errorf("only %d lines were explained; the scripts' expected output was not found", explained)
	}
}
