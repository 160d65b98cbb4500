// Command slowest reads the output of go test -json on standard input and
// prints each package's time and the slowest tests, to find what to make
// faster:
//
//	go test -count=1 -json ./... | go run ./internal/tools/slowest
//
// -n sets how many tests are listed (default 10). Lines that are not test
// events (a build error, say) are passed through to standard error.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

func main() {
	n := flag.Int("n", 10, "how many of the slowest tests to list")
	flag.Parse()
	s, err := read(os.Stdin, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "slowest:", err)
		os.Exit(1)
	}
	s.print(os.Stdout, *n)
}

// event is the part of a go test -json event this reads (go doc test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64 // seconds
}

// timing is one package's or one test's time and result.
type timing struct {
	pkg, test string
	seconds   float64
	result    string // pass, fail or skip
}

type summary struct {
	packages, tests []timing
}

// read collects the final event of every package and test.
func read(r io.Reader, other io.Writer) (summary, error) {
	var s summary
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintf(other, "%s\n", line)
			continue
		}
		switch e.Action {
		case "pass", "fail", "skip":
		default:
			continue
		}
		t := timing{pkg: e.Package, test: e.Test, seconds: e.Elapsed, result: e.Action}
		if e.Test == "" {
			s.packages = append(s.packages, t)
		} else {
			s.tests = append(s.tests, t)
		}
	}
	return s, sc.Err()
}

// print writes the packages, slowest first, and the n slowest tests.
func (s summary) print(w io.Writer, n int) {
	slowestFirst := func(a, b timing) int {
		if a.seconds != b.seconds {
			if a.seconds > b.seconds {
				return -1
			}
			return 1
		}
		return strings.Compare(a.pkg+" "+a.test, b.pkg+" "+b.test)
	}
	slices.SortFunc(s.packages, slowestFirst)
	slices.SortFunc(s.tests, slowestFirst)
	total := 0.0
	fmt.Fprintf(w, "%8s  %-4s  %s\n", "seconds", "", "package")
	for _, p := range s.packages {
		fmt.Fprintf(w, "%8.2f  %-4s  %s\n", p.seconds, p.result, p.pkg)
		total += p.seconds
	}
	fmt.Fprintf(w, "%8.2f        all packages, added up (they run side by side)\n", total)
	if n > len(s.tests) {
		n = len(s.tests)
	}
	fmt.Fprintf(w, "\n%d slowest tests:\n", n)
	for _, t := range s.tests[:n] {
		fmt.Fprintf(w, "%8.2f  %-4s  %s %s\n", t.seconds, t.result, short(t.pkg), t.test)
	}
}

// short drops the module path that every package shares.
func short(pkg string) string {
	if i := strings.Index(pkg, "ctrld-install/"); i >= 0 {
		return pkg[i+len("ctrld-install/"):]
	}
	return pkg
}
