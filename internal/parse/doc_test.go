package parse

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

func readLegacyDoc(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "legacy-output.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(doc)
}

// docTable is one markdown table of the doc: its header cells and rows,
// with the heading it sits under.
type docTable struct {
	heading string
	header  []string
	rows    [][]string
}

func docTables(doc string) []docTable {
	var out []docTable
	heading := ""
	var cur *docTable
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "#") {
			heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
		}
		if !strings.HasPrefix(line, "|") {
			cur = nil
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case cur == nil:
			out = append(out, docTable{heading: heading, header: cells})
			cur = &out[len(out)-1]
		case strings.HasPrefix(cells[0], "---"):
		default:
			cur.rows = append(cur.rows, cells)
		}
	}
	return out
}

func (tb docTable) column(name string) int {
	return slices.Index(tb.header, name)
}

// versionSet is a versions cell of the doc: see its grammar under "Mapping".
type versionSet struct {
	ranges [][2]*Version // nil bound: open
	any    bool
}

var docVersion = regexp.MustCompile(`^v(\d+\.\d+\.\d+)$`)

func parseVersionSet(cell string) (versionSet, error) {
	var vs versionSet
	for _, item := range strings.Split(cell, ",") {
		item = strings.TrimSpace(item)
		one := func(s string) (*Version, error) {
			m := docVersion.FindStringSubmatch(s)
			if m == nil {
				return nil, fmt.Errorf("%q is not vX.Y.Z", s)
			}
			return MustParseVersion(m[1]), nil
		}
		switch {
		case item == "any":
			vs.any = true
		case item == "v2":
			// The unreleased branch: no capture to check it against.
		case strings.HasPrefix(item, "≤"), strings.HasPrefix(item, "≥"):
			v, err := one(item[len("≤"):])
			if err != nil {
				return vs, err
			}
			if strings.HasPrefix(item, "≤") {
				vs.ranges = append(vs.ranges, [2]*Version{nil, v})
			} else {
				vs.ranges = append(vs.ranges, [2]*Version{v, nil})
			}
		case strings.Contains(item, "–"):
			lo, hi, _ := strings.Cut(item, "–")
			a, err := one(lo)
			if err != nil {
				return vs, err
			}
			b, err := one(hi)
			if err != nil {
				return vs, err
			}
			if b.LessThan(a) {
				return vs, fmt.Errorf("%q runs backwards", item)
			}
			vs.ranges = append(vs.ranges, [2]*Version{a, b})
		default:
			v, err := one(item)
			if err != nil {
				return vs, err
			}
			vs.ranges = append(vs.ranges, [2]*Version{v, v})
		}
	}
	return vs, nil
}

func (vs versionSet) contains(v *Version) bool {
	if vs.any {
		return true
	}
	for _, r := range vs.ranges {
		if (r[0] == nil || !v.LessThan(r[0])) && (r[1] == nil || !v.GreaterThan(r[1])) {
			return true
		}
	}
	return false
}

// messagePattern turns a row's first backticked message into a pattern for
// capture lines: the text up to its first placeholder, "listener.N" for
// any listener number.
func messagePattern(cell string) *regexp.Regexp {
	start := strings.IndexByte(cell, '`')
	if start < 0 {
		return nil
	}
	msg, _, ok := strings.Cut(cell[start+1:], "`")
	if !ok {
		return nil
	}
	if i := strings.IndexAny(msg, "<…"); i >= 0 {
		msg = msg[:i]
	}
	if len(strings.TrimSpace(msg)) < 8 {
		return nil
	}
	pat := regexp.QuoteMeta(strings.ToLower(msg))
	pat = strings.ReplaceAll(pat, `listener\.n`, `listener\.\d+`)
	return regexp.MustCompile(pat)
}

// Every message a capture shows must list that capture's release in its
// versions column.
func TestDocVersionsAgreeWithCaptures(t *testing.T) {
	caps := loadCaptures(t)
	text := make([]string, len(caps))
	for i, c := range caps {
		text[i] = strings.ToLower(string(StripANSI(append(append([]byte{}, c.output...), c.serviceLog...))))
	}
	rows, observed := 0, 0
	for _, tb := range docTables(readLegacyDoc(t)) {
		mc, vc := tb.column("message"), tb.column("versions")
		if mc < 0 || vc < 0 {
			continue
		}
		for _, row := range tb.rows {
			rows++
			vs, err := parseVersionSet(row[vc])
			if err != nil {
				t.Errorf("%s: %s: %v", tb.heading, row[mc], err)
				continue
			}
			pat := messagePattern(row[mc])
			if pat == nil {
				continue
			}
			seen := false
			for i, c := range caps {
				if !pat.MatchString(text[i]) {
					continue
				}
				seen = true
				if !vs.contains(c.version) {
					t.Errorf("%s: %s is printed by %s (%s) but the row says %q",
						tb.heading, row[mc], c.version, c.File, row[vc])
				}
			}
			if seen {
				observed++
			}
		}
	}
	if rows <= 40 {
		t.Errorf("%d rows with a versions column, want more than 40: the mapping tables were not found", rows)
	}
	if observed < 10 {
		t.Errorf("%d rows are seen in the captures, want at least 10: too few for the check to mean much", observed)
	}
}

func TestParseVersionSet(t *testing.T) {
	const set = "v1.1.3–v1.2.1, v1.5.0, ≥v2.1.0, v2"
	vs, err := parseVersionSet(set)
	if err != nil {
		t.Fatalf("parseVersionSet(%q): %v", set, err)
	}
	for v, want := range map[string]bool{"1.1.3": true, "1.2.0": true, "1.2.1": true, "1.3.0": false, "1.5.0": true, "2.0.0": false, "2.1.0": true} {
		if got := vs.contains(MustParseVersion(v)); got != want {
			t.Errorf("parseVersionSet(%q).contains(%s) = %v, want %v", set, v, got, want)
		}
	}
	for _, bad := range []string{"", "1.3.0", "v1.3", "from v1.4.5", "v1.5.0–v1.3.0", "v1.3.0-v1.5.0"} {
		if _, err := parseVersionSet(bad); err == nil {
			t.Errorf("parseVersionSet(%q) returned no error", bad)
		}
	}
}

// The doc's version table is features.go's.
func TestDocFeatureTable(t *testing.T) {
	var found bool
	for _, tb := range docTables(readLegacyDoc(t)) {
		fc, sc, lc := tb.column("feature"), tb.column("first release known with it"), tb.column("last release known without it")
		if fc < 0 || sc < 0 || lc < 0 {
			continue
		}
		found = true
		var names []string
		for _, row := range tb.rows {
			name := strings.Trim(row[fc], "`")
			names = append(names, name)
			f, ok := lookupFeature(name)
			if !ok {
				t.Errorf("%s is in the doc, not in features.go", name)
				continue
			}
			if got, want := row[sc], f.since.String(); got != want {
				t.Errorf("%s: the doc's first release with it is %q, features.go says %q", name, got, want)
			}
			want := "—"
			if f.lastWithout != nil {
				want = f.lastWithout.String()
			}
			if got := row[lc]; got != want {
				t.Errorf("%s: the doc's last release without it is %q, features.go says %q", name, got, want)
			}
		}
		for _, f := range features {
			if !slices.Contains(names, f.name) {
				t.Errorf("%s is in features.go, not in the doc", f.name)
			}
		}
	}
	if !found {
		t.Errorf("the version table was not found")
	}
}

// triageCase is one outcome of the catalogue that counts towards the
// triage figure.
type triageCase struct {
	what string
	v    verdict
}

// triageCases lists every terminal outcome the classifier can give: each
// code of each catalogue rule except the hints, cobra's unknown-flag error
// (own and other flag) and the any-fatal rule.
func triageCases() []triageCase {
	var out []triageCase
	for _, r := range legacyCatalogue {
		if r.tier == tierHint {
			continue
		}
		vs := r.outcomes
		if r.refine == nil {
			vs = []verdict{r.v}
		}
		for _, v := range vs {
			out = append(out, triageCase{r.prefix, v})
		}
	}
	return append(out,
		triageCase{"unknown flag, own", vCtrldVersionUnsupported},
		triageCase{"unknown flag, other", vInstallerUsage},
		triageCase{"any other fatal", vUnmapped},
	)
}

type triageCounts struct{ specific, catchAll, none int }

func countTriage(cases []triageCase) triageCounts {
	var n triageCounts
	for _, c := range cases {
		name := c.v.codeName()
		switch {
		case name == "" || name == codes.CtrldFailedUnclassified:
			n.none++
		case isCatchAll(codes.Must(name)):
			n.catchAll++
		default:
			n.specific++
		}
	}
	return n
}

var (
	triageSentence = regexp.MustCompile(`\*\*(\d+) of (\d+)\*\* \((\d+)%\) end in a specific code`)
	triageRow      = regexp.MustCompile(`(?m)^\| (specific code|stage catch-all|no code fits[^|]*) \| (\d+) \|$`)
)

// The doc's triage figure is computed here, from the catalogue.
func TestTriageFigure(t *testing.T) {
	n := countTriage(triageCases())
	total := n.specific + n.catchAll + n.none
	percent := n.specific * 100 / total
	want := fmt.Sprintf("**%d of %d** (%d%%) end in a specific code; table: specific %d, catch-all %d, none %d",
		n.specific, total, percent, n.specific, n.catchAll, n.none)

	doc := readLegacyDoc(t)
	m := triageSentence.FindStringSubmatch(doc)
	if m == nil {
		t.Fatalf("the triage sentence was not found; it should read: %s", want)
	}
	got := map[string]int{}
	for _, r := range triageRow.FindAllStringSubmatch(doc, -1) {
		got[strings.Fields(r[1])[0]], _ = strconv.Atoi(r[2])
	}
	if wantNums := []string{strconv.Itoa(n.specific), strconv.Itoa(total), strconv.Itoa(percent)}; !slices.Equal(m[1:], wantNums) {
		t.Errorf("the triage sentence gives %q, want %q; it should read: %s", m[1:], wantNums, want)
	}
	if wantRows := map[string]int{"specific": n.specific, "stage": n.catchAll, "no": n.none}; !maps.Equal(got, wantRows) {
		t.Errorf("the triage table gives %v, want %v; it should read: %s", got, wantRows, want)
	}
}

func TestTriageCountsEveryVerdict(t *testing.T) {
	// Every verdict that names a code is reachable through some case, so
	// the figure cannot leave a code out.
	have := map[verdict]bool{}
	for _, c := range triageCases() {
		have[c.v] = true
	}
	for _, v := range verdicts() {
		if !have[v] {
			t.Errorf("verdict %s is not counted", v)
		}
	}
}

// A refine rule's outcomes are exactly what it gives for the catalogue's
// examples.
func TestRefineOutcomes(t *testing.T) {
	examples := map[string][]string{}
	for _, r := range catalogueRows {
		text := r.msg
		if r.err != "" {
			text += ` error="` + r.err + `"`
		}
		examples[strings.ToLower(r.msg)] = append(examples[strings.ToLower(r.msg)], text)
	}
	// The hint rule's examples: warnings are not catalogue rows, which are
	// classified alone.
	for _, e := range []string{"dial tcp: i/o timeout", "invalid resolver uid", `client.Do: Post "x": context deadline exceeded`,
		"Device does not exist", `client.Do: Post "x": x509: certificate signed by unknown authority`, "invalid character '<' looking for beginning of value"} {
		examples["could not fetch resolver config"] = append(examples["could not fetch resolver config"], `could not fetch resolver config error="`+e+`"`)
	}
	c := NewClassifier()
	for _, r := range legacyCatalogue {
		if r.refine == nil {
			if len(r.outcomes) != 0 {
				t.Errorf("%q has no refine, but outcomes %v", r.prefix, r.outcomes)
			}
			continue
		}
		if len(r.outcomes) == 0 {
			t.Fatalf("%q has a refine and no outcomes", r.prefix)
		}
		seen := map[verdict]bool{}
		for msg, texts := range examples {
			if !strings.HasPrefix(msg, r.prefix) {
				continue
			}
			for _, text := range texts {
				v := r.refine(c, []byte(text[len(r.prefix):]), levelFatal, false)
				c.buf = c.buf[:0]
				if v == vNone {
					continue
				}
				if !slices.Contains(r.outcomes, v) {
					t.Errorf("%q gives %s for %q, which is not among its outcomes %v", r.prefix, v, text, r.outcomes)
				}
				seen[v] = true
			}
		}
		for _, v := range r.outcomes {
			if !seen[v] {
				t.Errorf("%q: no example gives %s", r.prefix, v)
			}
		}
	}
}

func TestCountTriage(t *testing.T) {
	n := countTriage([]triageCase{{"a", vAPIUnreachable}, {"b", vBootstrapFailed}, {"c", vUnmapped}, {"d", vServiceFailed}, {"e", vInstallerUsage}})
	if want := (triageCounts{specific: 2, catchAll: 2, none: 1}); n != want {
		t.Errorf("countTriage() = %+v, want %+v", n, want)
	}
}
