package fleet

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/fleetreport"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// wantBucket is the headline's bucket, spelled out apart from the code
// under test: what an admin has to act on, and what not.
func wantBucket(label string) fleetreport.Bucket {
	switch label {
	case states.NeverRun, states.NotInstalled, states.Uninstalled, "(empty)":
		return fleetreport.BucketNotDeployed
	case states.Running:
		return fleetreport.BucketRunning
	case states.StatusFailed, states.InvalidRecord:
		return fleetreport.BucketAttention
	}
	switch codes.Must(label).Class {
	case codes.ClassOK:
		return fleetreport.BucketHealthy
	case codes.ClassAlreadyManaged:
		return fleetreport.BucketSettled
	}
	return fleetreport.BucketAttention
}

// Every code and state has a bucket, and the ones an admin cannot or need
// not act on are not "needs attention".
func TestEveryValueHasABucket(t *testing.T) {
	t.Parallel()
	for k := range numKeys {
		v := valueOf(key(k))
		if got, want := v.Bucket(), wantBucket(v.Label()); got != want {
			t.Errorf("%s: bucket %q, want %q", v.Label(), got, want)
		}
	}
	pin := codes.Must(codes.DeactivationPinRequired)
	if got := (fleetreport.Value{Code: &pin}).Bucket(); got != fleetreport.BucketSettled {
		t.Errorf("DEACTIVATION_PIN_REQUIRED is %q, want settled", got)
	}
}

// A 500-device fleet's headline, in every format, is its devices counted
// by bucket from the generated ground truth.
func TestHeadlineOfFleet(t *testing.T) {
	t.Parallel()
	dir := wine.TempDir(t)
	fleet := makeFleet(t, dir, 500)
	c := NewLatestCounter()
	if err := c.ReadPath(dir); err != nil {
		t.Fatal(err)
	}
	s := c.Summary()
	want := map[fleetreport.Bucket]int{}
	for _, b := range fleetreport.Buckets {
		want[b] = 0
	}
	for _, f := range fleet {
		want[wantBucket(f.want)]++
	}
	if !maps.Equal(s.Headline, want) {
		t.Fatalf("headline = %v, want %v", s.Headline, want)
	}
	if want[fleetreport.BucketSettled] == 0 || want[fleetreport.BucketRunning] == 0 || want[fleetreport.BucketNotDeployed] == 0 {
		t.Fatalf("the fleet has no settled, running or not deployed devices: %v", want)
	}
	line := fmt.Sprintf("healthy %d, needs attention %d, not deployed %d, settled %d, running %d",
		want[fleetreport.BucketHealthy], want[fleetreport.BucketAttention], want[fleetreport.BucketNotDeployed], want[fleetreport.BucketSettled], want[fleetreport.BucketRunning])
	if text := format(t, s, "text"); !strings.HasPrefix(text, "500 devices from 725 inputs, the last outcome of each\n"+line+"\n") {
		t.Errorf("text report starts:\n%.300s\nwant its second line %q", text, line)
	}
	md := format(t, s, "markdown")
	mdLine := regexp.MustCompile(`([0-9]+)`).ReplaceAllString(line, "**$1**")
	if !strings.Contains(md, "\n\n"+capitalize(mdLine)+".\n") {
		t.Errorf("markdown report has no headline %q:\n%.400s", capitalize(mdLine), md)
	}
	j := parseJSONReport(t, format(t, s, "json"))
	h := j.Headline
	if h.Devices != 500 || h.Healthy != want[fleetreport.BucketHealthy] || h.NeedsAttention != want[fleetreport.BucketAttention] || h.NotDeployed != want[fleetreport.BucketNotDeployed] || h.Settled != want[fleetreport.BucketSettled] || h.Running != want[fleetreport.BucketRunning] {
		t.Errorf("JSON headline = %+v, want %v", h, want)
	}
	csvHead := map[string]int{}
	for _, r := range csvRows(t, format(t, s, "csv"))[1:] {
		if r[3] == fleetreport.ClassHeadline {
			n, _ := strconv.Atoi(r[4])
			csvHead[r[0]] = n
		}
	}
	for _, b := range fleetreport.Buckets {
		if csvHead[b.Key()] != want[b] {
			t.Errorf("CSV headline %s = %d, want %d", b.Key(), csvHead[b.Key()], want[b])
		}
	}
	page := format(t, s, "html")
	for _, b := range fleetreport.Buckets {
		attr := fmt.Sprintf(` data-%s="%d"`, strings.ReplaceAll(b.Key(), "_", "-"), want[b])
		if !strings.Contains(page, attr) {
			t.Errorf("the HTML headline has no%s", attr)
		}
	}
	withDevices := s
	withDevices.ListDevices = true
	for _, r := range csvRows(t, format(t, withDevices, "csv"))[1:] {
		if wb := wantBucket(stateLabelOf(r[2], r[1])); r[6] != wb.Key() {
			t.Errorf("CSV device %s: bucket %s, want %s", r[0], r[6], wb.Key())
		}
	}
}

// histRun is one run in a device's history: its code and when it ended.
type histRun struct {
	code string
	end  time.Time
}

func runLine(r histRun) string {
	c := codes.Must(r.code)
	line := report.Prefix + outcome.LineProvisioned
	if !c.IsOK() {
		line = report.Prefix + codes.FailureLine(codes.VerbProvisioning, c)
	}
	return r.end.UTC().Format(time.RFC3339) + " " + line + "\n"
}

func runsLog(runs []histRun) string {
	var b strings.Builder
	for _, r := range runs {
		b.WriteString(runLine(r))
	}
	return b.String()
}

func runRecord(t testing.TB, r histRun) string {
	c := codes.Must(r.code)
	o := outcome.Outcome{Command: outcome.Install, Code: c, Source: outcome.SourcePostConditions, Action: outcome.ActionProvisioned, Attempts: 1}
	b, err := json.Marshal(record.New(record.FromOutcome(o, "0.2.0"), r.end))
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// streakOf is the ground truth: the runs at the end of the history that
// need attention, and when the first of them ended.
func streakOf(runs []histRun) (int, string) {
	n, since := 0, ""
	for i := len(runs) - 1; i >= 0; i-- {
		if wantBucket(runs[i].code) != fleetreport.BucketAttention {
			break
		}
		n, since = n+1, runs[i].end.UTC().Format(time.RFC3339)
	}
	return n, since
}

// The streak of failures a device is in, counted across the files a
// Support agent collects: one log, a log and its rotations read in any
// order, a record beside the log of the same runs, a record newer than the
// log. Checked against each device's generated history.
func TestFailingSinceAndFailures(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(28, 8))
	failing := []string{codes.ListenerBindFailed, codes.APIUnreachable, codes.ServiceSelfcheckFailed, codes.APIRejected}
	day0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	type want struct {
		failures int
		since    string
		kind     string
	}
	wants := map[string]want{}
	c := NewLatestCounter()
	for i := range 400 {
		name := fmt.Sprintf("dev-%03d", i)
		runs := make([]histRun, 1+rng.IntN(12))
		for j := range runs {
			code := codes.OK
			switch p := rng.IntN(100); {
			case p < 55:
				code = failing[rng.IntN(len(failing))]
			case p < 60:
				code = codes.DeactivationPinRequired
			}
			runs[j] = histRun{code: code, end: day0.Add(time.Duration(j)*24*time.Hour + time.Duration(i)*time.Minute)}
		}
		n, since := streakOf(runs)
		w := want{failures: n, since: since}
		read := func(gen int, s string) {
			if err := c.ReadDevice(name, gen, strings.NewReader(s)); err != nil {
				t.Fatal(err)
			}
		}
		switch k := i % 5; {
		case k == 0:
			w.kind = "log"
			read(0, runsLog(runs))
		case k == 1 && len(runs) >= 3:
			w.kind = "rotated, read live first"
			cut1, cut2 := len(runs)/3, 2*len(runs)/3
			read(0, runsLog(runs[cut2:]))
			read(2, runsLog(runs[cut1:cut2]))
			read(3, runsLog(runs[:cut1]))
		case k == 2:
			w.kind = "record and log of the same runs"
			read(0, runRecord(t, runs[len(runs)-1]))
			read(0, runsLog(runs))
		case k == 3 && len(runs) >= 2:
			w.kind = "log, then a newer record"
			read(0, runsLog(runs[:len(runs)-1]))
			read(0, runRecord(t, runs[len(runs)-1]))
		default:
			w.kind = "log and record, the log read last"
			read(0, runsLog(runs))
			read(0, runRecord(t, runs[len(runs)-1]))
		}
		wants[name] = w
	}
	s := c.Summary()
	kinds := map[string]int{}
	for _, d := range s.Devices {
		w := wants[d.Device]
		kinds[w.kind]++
		if d.Bucket() != fleetreport.BucketAttention {
			w.since, w.failures = "", 0
		}
		if d.Failures != w.failures || d.FailingSince != w.since {
			t.Errorf("%s (%s): failed %d times since %q, want %d since %q", d.Device, w.kind, d.Failures, d.FailingSince, w.failures, w.since)
		}
	}
	if len(kinds) != 5 || s.Headline[fleetreport.BucketAttention] < 100 {
		t.Errorf("kinds %v, %d need attention: the test does not cover what it should", kinds, s.Headline[fleetreport.BucketAttention])
	}
	// The JSON and CSV device rows say the same.
	s.ListDevices = true
	j := parseJSONReport(t, format(t, s, "json"))
	for _, d := range j.Devices {
		w := wants[d.Device]
		if d.Bucket != fleetreport.BucketAttention.Key() {
			continue
		}
		if d.Failures != w.failures || d.FailingSince != w.since {
			t.Errorf("JSON %s: %d since %q, want %d since %q", d.Device, d.Failures, d.FailingSince, w.failures, w.since)
		}
	}
}

// oneALine is a generated export, one value a line: each device's code or
// state, and what a report must count.
func oneALine(rng *rand.Rand, n int, wrap func(string) string) (string, map[string]int) {
	var values []string
	for _, c := range codes.All() {
		values = append(values, c.Name)
	}
	for _, s := range states.All {
		if s.Word != "" {
			values = append(values, s.Word)
		}
	}
	var b strings.Builder
	want := map[string]int{}
	for range n {
		v := codes.OK
		if rng.IntN(3) == 0 {
			v = values[rng.IntN(len(values))]
		}
		want[v]++
		b.WriteString(wrap(v))
	}
	return b.String(), want
}

// Bare codes and <result> values, one a line, as an Intune custom
// attribute, a Remediation's output column or a Jamf export lists them,
// are counted one each: with Windows line ends, quotes and a header line.
func TestOneValueALine(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(28, 9))
	for _, tc := range []struct {
		name   string
		header string
		wrap   func(string) string
	}{
		{"bare", "", func(v string) string { return v + "\n" }},
		{"bare, CRLF, a header", "ctrld-install state\r\n", func(v string) string { return v + "\r\n" }},
		{"bare, quoted", "\"Value\"\n", func(v string) string { return "\"" + v + "\"\n" }},
		{"bare, blanks", "", func(v string) string { return "  " + v + " \t\n\n" }},
		{"result", "", func(v string) string { return "<result>" + v + "</result>\n" }},
		{"result, CRLF", "Result\r\n", func(v string) string { return "<result>" + v + "</result>\r\n" }},
	} {
		body, want := oneALine(rng, 3000, tc.wrap)
		s := count(t, tc.header+body)
		if got := counts(s); !maps.Equal(got, want) {
			t.Errorf("%s: counts = %v, want %v", tc.name, got, want)
		}
	}
	// A code alone on a line of other output (explain's heading, a note)
	// is not an outcome.
	for _, in := range []string{
		"LISTENER_BIND_FAILED\n  stage:      listener\n",
		"run this:\nOK\nthen that\n",
		"OK then\n",
		"LISTENER_BIND_FAILED_TOO\n",
	} {
		if s := count(t, in); s.Outcomes != 0 {
			t.Errorf("%q: %d outcomes, want 0", in, s.Outcomes)
		}
	}
}

// exportRow is one row of a generated inventory export.
type exportRow struct {
	device string
	cell   string
	want   string // the label the device must get
}

// makeExport generates an inventory export's rows: the value as a bare
// code, a <result> value, a whole failure or success line, a script's
// output over several lines, or nothing.
func makeExport(rng *rand.Rand, n int) []exportRow {
	failing := []string{codes.ListenerBindFailed, codes.APIUnreachable, codes.DeactivationPinRequired, codes.CtrldTimeout}
	var rows []exportRow
	for i := range n {
		code := codes.OK
		if rng.IntN(4) == 0 {
			code = failing[rng.IntN(len(failing))]
		}
		c := codes.Must(code)
		r := exportRow{device: fmt.Sprintf("MAC-%05d", i), want: code}
		line := report.Prefix + outcome.LineSkipped
		if !c.IsOK() {
			line = report.Prefix + codes.FailureLine(codes.VerbProvisioning, c)
		}
		switch rng.IntN(6) {
		case 0:
			r.cell = code
		case 1:
			r.cell = "<result>" + code + "</result>"
		case 2:
			r.cell = line
		case 3:
			r.cell = "Nov 29 10:14:03 mac postinstall: --cd-org " + canary + "\n" + report.Prefix + "next step: " + c.NextStep + "\n" + line + "\n"
		case 4:
			r.cell = "<result>" + states.NeverRun + "</result>"
			r.want = states.NeverRun
		default:
			r.cell = ""
			r.want = "(empty)"
		}
		rows = append(rows, r)
	}
	return rows
}

func exportCSV(t testing.TB, header []string, rows []exportRow, device, code int) string {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.UseCRLF = true
	w.Write(header)
	for i, r := range rows {
		rec := make([]string, len(header))
		for k := range rec {
			rec[k] = fmt.Sprintf("%s-%d", canary, i)
		}
		if device >= 0 {
			rec[device] = r.device
		}
		rec[code] = r.cell
		w.Write(rec)
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// --csv-column: an inventory export of 2,000 computers (Jamf's, Intune's
// headers) is one device a row, named by its device column, each counted
// right against the generated ground truth, and no other cell is printed.
func TestReadCSVExport(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(28, 10))
	rows := makeExport(rng, 2000)
	want := map[string]int{}
	for _, r := range rows {
		want[r.want]++
	}
	for _, tc := range []struct {
		name       string
		header     []string
		device     int
		cols       CSVColumns
		namedByRow bool
	}{
		{"Jamf", []string{"Computer Name", "Serial Number", "ctrld-install"}, 0, CSVColumns{Code: "ctrld-install"}, false},
		{"Intune, BOM", []string{"\ufeffDevice ID", "Device name", "Output"}, 1, CSVColumns{Code: " output "}, false},
		{"named device column", []string{"Asset", "Name", "State"}, 0, CSVColumns{Code: "State", Device: "asset"}, false},
		{"no device column", []string{"Serial", "State"}, -1, CSVColumns{Code: "State"}, true},
	} {
		code := len(tc.header) - 1
		in := exportCSV(t, tc.header, rows, tc.device, code)
		c := NewLatestCounter()
		if err := c.ReadCSV(strings.NewReader(in), tc.cols); err != nil {
			t.Fatalf("%s: ReadCSV: %v", tc.name, err)
		}
		s := c.Summary()
		s.ListDevices = true
		if got := counts(s); !maps.Equal(got, want) {
			t.Errorf("%s: counts = %v, want %v", tc.name, got, want)
		}
		if len(s.Devices) != len(rows) {
			t.Fatalf("%s: %d devices, want %d", tc.name, len(s.Devices), len(rows))
		}
		byName := map[string]string{}
		for _, d := range s.Devices {
			byName[d.Device] = d.Label()
		}
		for i, r := range rows {
			name := r.device
			if tc.namedByRow {
				name = "(row " + strconv.Itoa(i+1) + ")"
			}
			if byName[name] != r.want {
				t.Errorf("%s: %s is %q, want %q (cell %q)", tc.name, name, byName[name], r.want, r.cell)
				break
			}
		}
		for _, f := range fleetreport.Formats {
			if out := format(t, s, f); strings.Contains(out, canary) || strings.Contains(out, "Serial") {
				t.Errorf("%s: the %s report prints a cell or header of the export", tc.name, f)
			}
		}
	}
	for _, cols := range []CSVColumns{{Code: "Nope"}, {Code: "State", Device: "Nope"}} {
		c := NewLatestCounter()
		if err := c.ReadCSV(strings.NewReader("Name,State\nmac,OK\n"), cols); err != ErrNoColumn {
			t.Errorf("ReadCSV(%+v) = %v, want ErrNoColumn", cols, err)
		}
	}
}

// syntheticFleet feeds a latest counter n devices, as logs of their runs
// (most healthy for weeks, some failing for days, a few settled, removed,
// running or never run), without touching the disk.
func syntheticFleet(tb testing.TB, n int) *Counter {
	rng := rand.New(rand.NewPCG(28, uint64(n)))
	failing := []string{codes.ListenerBindFailed, codes.APIUnreachable, codes.ServiceSelfcheckFailed, codes.APIRejected,
		codes.ListenerConfiguredAddrUnavailable, codes.CtrldVersionUnsupported, codes.InstallerNotRoot, codes.ServiceNotRunning}
	day0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	c := NewLatestCounter()
	var b strings.Builder
	for i := range n {
		b.Reset()
		name := fmt.Sprintf("mac-%06d", i)
		switch k := rng.IntN(100); {
		case k < 4:
			b.WriteString("<result>NEVER_RUN</result>\n")
		case k < 6:
			b.WriteString(report.Prefix + outcome.LineUninstalled + "\n")
		case k < 7:
			b.WriteString(`{"version":1,"result":"running","phase":"ctrld-running","pid":42,"timestamp":"2026-11-30T10:00:00Z"}` + "\n")
		default:
			runs := 1 + rng.IntN(8)
			fail := ""
			if k < 30 {
				fail = failing[rng.IntN(len(failing))]
			} else if k < 31 {
				fail = codes.DeactivationPinRequired
			}
			start := day0.Add(time.Duration(rng.IntN(60*24)) * time.Minute * 60)
			failFrom := rng.IntN(runs)
			for r := range runs {
				code := codes.OK
				if fail != "" && r >= failFrom {
					code = fail
				}
				b.WriteString(runLine(histRun{code: code, end: start.Add(time.Duration(r) * 24 * time.Hour)}))
			}
		}
		if err := c.ReadDevice(name, 0, strings.NewReader(b.String())); err != nil {
			tb.Fatal(err)
		}
	}
	return c
}

var attRowRE = regexp.MustCompile(`<tr data-att="([^"]*)" data-code="([^"]*)" data-since="([^"]*)" data-failures="([0-9]+)">`)
var groupRE = regexp.MustCompile(`<div class="group" data-code="([^"]*)" data-class="[^"]*" data-count="([0-9]+)" data-listed="([0-9]+)">`)

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// dayOf is the date of an RFC 3339 time, "" for none.
func dayOf(rfc string) string {
	if len(rfc) < 10 {
		return ""
	}
	return rfc[:10]
}

// checkAttention reads the page's devices that need attention: every
// group is a code of devices that need attention, lists its share of
// fleetreport.MaxListedTotal, the oldest failures first, and counts the rest; the
// groups add up to the headline.
func checkAttention(t *testing.T, page string, s fleetreport.Summary) {
	t.Helper()
	byName := map[string]fleetreport.DeviceRow{}
	perCode := map[string]int{}
	for _, d := range s.Devices {
		byName[d.Device] = d
		if d.Bucket() == fleetreport.BucketAttention {
			perCode[d.Name()]++
		}
	}
	total, allListed := 0, 0
	groups := groupRE.FindAllStringSubmatch(page, -1)
	each := fleetreport.ListedPerCode(len(groups))
	for _, g := range groups {
		n, _ := strconv.Atoi(g[2])
		listed, _ := strconv.Atoi(g[3])
		total += n
		allListed += listed
		if perCode[g[1]] != n || listed != min(n, each) {
			t.Errorf("group %s: %d devices, %d listed; want %d, %d", g[1], n, listed, perCode[g[1]], min(perCode[g[1]], each))
		}
		if rest := n - listed; rest > 0 && !strings.Contains(page, fmt.Sprintf("and %s more with this code, not listed.", plural(rest, "device"))) {
			t.Errorf("group %s does not count the %d devices it does not list", g[1], rest)
		}
	}
	if allListed > max(fleetreport.MaxListedTotal, fleetreport.MinListed*len(groups)) {
		t.Errorf("the page lists %d devices, want at most %d", allListed, fleetreport.MaxListedTotal)
	}
	if total != s.Headline[fleetreport.BucketAttention] {
		t.Errorf("the groups hold %d devices, the headline says %d need attention", total, s.Headline[fleetreport.BucketAttention])
	}
	rows := attRowRE.FindAllStringSubmatch(page, -1)
	listedPer := map[string][]string{}
	for _, r := range rows {
		d, ok := byName[r[1]]
		if !ok || d.Name() != r[2] || d.Bucket() != fleetreport.BucketAttention || dayOf(d.FailingSince) != r[3] || strconv.Itoa(d.Failures) != r[4] {
			t.Errorf("listed %v, the device is %+v", r[1:], d)
		}
		listedPer[r[2]] = append(listedPer[r[2]], r[3])
	}
	for code, since := range listedPer {
		if !sort.SliceIsSorted(since, func(i, j int) bool {
			return since[i] != "" && (since[j] == "" || since[i] < since[j])
		}) {
			t.Errorf("%s: not the oldest failure first: %v", code, since)
		}
		// The listed ones are the oldest of the code.
		var all []string
		for _, d := range s.Devices {
			if d.Name() == code && d.Bucket() == fleetreport.BucketAttention {
				all = append(all, dayOf(d.FailingSince))
			}
		}
		sort.Strings(all)
		if len(since) > 0 && since[len(since)-1] != "" && all[len(since)-1] != since[len(since)-1] {
			t.Errorf("%s: the last listed failure is from %s, the %dth oldest from %s", code, since[len(since)-1], len(since), all[len(since)-1])
		}
	}
}

// The page of a 100,000-device fleet stays small: devices that need
// attention only, grouped by code, at most fleetreport.MaxListedTotal in all; healthy
// devices only with --devices.
func TestHTMLReportOf100000Devices(t *testing.T) {
	if os.Getenv("CTRLD_INSTALL_SUMMARIZE_FULL") == "" {
		t.Skip("feeds 100,000 devices; CI sets CTRLD_INSTALL_SUMMARIZE_FULL=1")
	}
	t.Parallel()
	s := syntheticFleet(t, 100_000).Summary()
	if s.Headline[fleetreport.BucketAttention] < 10_000 {
		t.Fatalf("only %d devices need attention; the test wants many", s.Headline[fleetreport.BucketAttention])
	}
	page := format(t, s, "html")
	if len(page) >= 1<<20 {
		t.Errorf("the page is %d bytes, want under 1 MiB", len(page))
	}
	if strings.Contains(page, `data-device="`) {
		t.Errorf("the page lists devices one by one without --devices")
	}
	checkAttention(t, page, s)
	j := parseJSONReport(t, format(t, s, "json"))
	checkChartAgainstJSON(t, parseHTMLChart(t, page), j)
	if j.Runs <= 100_000 || len(j.Days) < 60 {
		t.Errorf("the days hold %d runs over %d days; want every run read, over two months", j.Runs, len(j.Days))
	}
	if !strings.Contains(page, "Every run in the files read") {
		t.Errorf("the latest report's chart does not say what it plots")
	}
	t.Logf("%d bytes; headline %v", len(page), s.Headline)
}

// repeatReader yields line n times without holding it n times.
type repeatReader struct {
	line []byte
	n    int
	off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	w := 0
	for w < len(p) && r.n > 0 {
		k := copy(p[w:], r.line[r.off:])
		w, r.off = w+k, r.off+k
		if r.off == len(r.line) {
			r.off, r.n = 0, r.n-1
		}
	}
	if w == 0 {
		return 0, io.EOF
	}
	return w, nil
}

// Two million bare codes in one input are counted without being held:
// the counter keeps how many of each, not the lines; and as a device's
// only input they are its streak.
func TestBareWordsAreNotHeld(t *testing.T) {
	const n = 2_000_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c := NewCounter()
	if err := c.ReadDevice("mac", 0, &repeatReader{line: []byte("LISTENER_BIND_FAILED\r\n"), n: n}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 8<<20 {
		t.Errorf("the heap grew by %d bytes reading %d bare codes", grew, n)
	}
	s := c.Summary()
	if got := counts(s); got[codes.ListenerBindFailed] != n || s.Runs != n || s.Undated != n {
		t.Errorf("counts %v, %d runs, %d undated; want %d of LISTENER_BIND_FAILED", got, s.Runs, s.Undated, n)
	}
	if d := s.Devices[0]; d.Failures != n || d.FailingSince != "" {
		t.Errorf("the device failed %d times since %q, want %d, undated", d.Failures, d.FailingSince, n)
	}
}

// A file of one code a line, as Intune's custom attribute is exported (or
// a Remediation's <result> values), lists devices: each line is one, and
// the headline, the device table, the JSON and the page count the same
// devices, with or without --latest.
func TestCodePerLineFileIsOneDeviceALine(t *testing.T) {
	t.Parallel()
	for _, wrap := range []func(string) string{
		func(v string) string { return v + "\r\n" },
		func(v string) string { return "\"<result>" + v + "</result>\"\n" },
	} {
		var b strings.Builder
		b.WriteString("ctrld-install state\r\n")
		for i := range 1000 {
			switch {
			case i%10 == 3:
				b.WriteString(wrap("SERVICE_NOT_RUNNING"))
			case i == 500:
				b.WriteString("\r\n") // a blank line is no device
				fallthrough
			default:
				b.WriteString(wrap("OK"))
			}
		}
		path := filepath.Join(wine.TempDir(t), "attribute.csv")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		checkDeviceList(t, path)
	}
}

func checkDeviceList(t *testing.T, path string) {
	t.Helper()
	for _, latest := range []bool{false, true} {
		c := NewCounter()
		if latest {
			c = NewLatestCounter()
		}
		if err := c.ReadPath(path); err != nil {
			t.Fatal(err)
		}
		s := c.Summary()
		s.ListDevices = true
		if s.Headline[fleetreport.BucketAttention] != 100 || s.Headline[fleetreport.BucketHealthy] != 900 || len(s.Devices) != 1000 {
			t.Fatalf("latest=%v: headline %v over %d devices, want 100 needing attention and 900 healthy of 1000", latest, s.Headline, len(s.Devices))
		}
		if got := counts(s); got[codes.ServiceNotRunning] != 100 || got[codes.OK] != 900 || s.Outcomes != 1000 {
			t.Errorf("latest=%v: counts %v of %d outcomes", latest, got, s.Outcomes)
		}
		// Named by the file and the line the admin finds them on: the
		// header is line 1, the blank one line 503.
		if d := s.Devices[0]; d.Device != "attribute.csv line 2" || d.Name() != codes.OK {
			t.Errorf("latest=%v: first device %+v", latest, d)
		}
		if d := s.Devices[3]; d.Device != "attribute.csv line 5" || d.Name() != codes.ServiceNotRunning || d.Failures != 1 {
			t.Errorf("latest=%v: fourth device %+v", latest, d)
		}
		if d := s.Devices[len(s.Devices)-1]; d.Device != "attribute.csv line 1002" {
			t.Errorf("latest=%v: last device %+v", latest, d)
		}

		var text strings.Builder
		if err := fleetreport.Write(&text, s, "text"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text.String(), "healthy 900, needs attention 100,") {
			t.Errorf("latest=%v: text headline:\n%s", latest, firstLines(text.String(), 2))
		}
		if got := strings.Count(text.String(), "\nattribute.csv line "); got != 1000 {
			t.Errorf("latest=%v: the device table has %d rows, want 1000", latest, got)
		}
		var js strings.Builder
		if err := fleetreport.Write(&js, s, "json"); err != nil {
			t.Fatal(err)
		}
		var v struct {
			Headline map[string]int   `json:"headline"`
			Devices  []map[string]any `json:"devices"`
		}
		if err := json.Unmarshal([]byte(js.String()), &v); err != nil {
			t.Fatal(err)
		}
		if v.Headline["devices"] != 1000 || v.Headline["needs_attention"] != 100 || len(v.Devices) != 1000 {
			t.Errorf("latest=%v: JSON headline %v, %d devices", latest, v.Headline, len(v.Devices))
		}
		var page strings.Builder
		if err := fleetreport.Write(&page, s, "html"); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`data-devices="1000"`, `data-needs-attention="100"`, `data-healthy="900"`, `<section class="attention" data-count="100">`} {
			if !strings.Contains(page.String(), want) {
				t.Errorf("latest=%v: the page lacks %s", latest, want)
			}
		}
	}
}

// Only a device's own file lists devices: bare codes among a device
// folder's files are that device's runs, and a single code is the file's
// own device.
func TestCodePerLineInsideADeviceFolder(t *testing.T) {
	t.Parallel()
	dir := wine.TempDir(t)
	if err := os.MkdirAll(filepath.Join(dir, "mac-17"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"mac-17/attribute.txt": "OK\nSERVICE_NOT_RUNNING\n",
		"mac-18.txt":           "OK\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := NewLatestCounter()
	if err := c.ReadPath(dir); err != nil {
		t.Fatal(err)
	}
	s := c.Summary()
	var got []string
	for _, d := range s.Devices {
		got = append(got, d.Device+" "+d.Name())
	}
	if want := []string{"mac-17 " + codes.ServiceNotRunning, "mac-18.txt " + codes.OK}; !slices.Equal(got, want) {
		t.Errorf("devices %q, want %q", got, want)
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// A list of two million devices, one code a line, is held in a byte a
// line until the summary.
func TestDeviceListIsAByteALine(t *testing.T) {
	const n = 2_000_000
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	c := NewCounter()
	if err := c.Read(&repeatReader{line: []byte("LISTENER_BIND_FAILED\r\n"), n: n}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 8<<20 {
		t.Errorf("the heap grew by %d bytes reading a list of %d devices", grew, n)
	}
	if len(c.lists) != 1 || len(c.lists[0].lines) != n || len(c.devices) != 0 {
		t.Errorf("%d lists, %d named devices; want one list of %d", len(c.lists), len(c.devices), n)
	}
}
