package fleet

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"html"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/fleetreport"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// reportJSON is the JSON report as a reader of it sees it.
type reportJSON struct {
	Outcomes int  `json:"outcomes"`
	Inputs   int  `json:"inputs"`
	Latest   bool `json:"latest"`
	Running  int  `json:"running"`
	Runs     int  `json:"runs"`
	Undated  int  `json:"undated"`
	Headline struct {
		Devices        int `json:"devices"`
		Healthy        int `json:"healthy"`
		NeedsAttention int `json:"needs_attention"`
		NotDeployed    int `json:"not_deployed"`
		Settled        int `json:"settled"`
		Running        int `json:"running"`
	} `json:"headline"`
	Codes []struct {
		Code  string  `json:"code"`
		Class string  `json:"class"`
		Count int     `json:"count"`
		Share float64 `json:"share"`
	} `json:"codes"`
	States []struct {
		State string  `json:"state"`
		Count int     `json:"count"`
		Share float64 `json:"share"`
	} `json:"states"`
	Days []struct {
		Date   string         `json:"date"`
		Counts map[string]int `json:"counts"`
	} `json:"days"`
	Devices []struct {
		Device       string `json:"device"`
		Code         string `json:"code"`
		Class        string `json:"class"`
		When         string `json:"when"`
		CtrldVersion string `json:"ctrld_version"`
		Action       string `json:"action"`
		Bucket       string `json:"bucket"`
		FailingSince string `json:"failing_since"`
		Failures     int    `json:"failures"`
	} `json:"devices"`
}

func (j reportJSON) counts() map[string]int {
	m := map[string]int{}
	for _, c := range j.Codes {
		m[c.Code] = c.Count
	}
	for _, s := range j.States {
		m[states.Label(s.State)] = s.Count
	}
	return m
}

func (j reportJSON) shares() map[string]float64 {
	m := map[string]float64{}
	for _, c := range j.Codes {
		m[c.Code] = c.Share
	}
	for _, s := range j.States {
		m[states.Label(s.State)] = s.Share
	}
	return m
}

func format(t *testing.T, s fleetreport.Summary, f string) string {
	t.Helper()
	var b bytes.Buffer
	if err := fleetreport.Write(&b, s, f); err != nil {
		t.Fatalf("fleetreport.Write(%s): %v", f, err)
	}
	return b.String()
}

func parseJSONReport(t *testing.T, s string) reportJSON {
	t.Helper()
	var j reportJSON
	if err := json.Unmarshal([]byte(s), &j); err != nil {
		t.Fatalf("the JSON report does not parse: %v\n%s", err, s)
	}
	return j
}

var textRowRE = regexp.MustCompile(`(?m)^ *([0-9]+) +([0-9.]+)%  (.+) \(([^()]*)\)$`)

// textCounts reads the rows of the text report; the label is what comes
// before the last parenthesis.
func textCounts(s string) map[string]int {
	m := map[string]int{}
	for _, r := range textRowRE.FindAllStringSubmatch(s, -1) {
		n, _ := strconv.Atoi(r[1])
		m[r[3]] = n
	}
	return m
}

var markdownRowRE = regexp.MustCompile("(?m)^\\| `([^`]*)` \\| [^|]* \\| [^|]* \\| [^|]* \\| ([0-9]+) \\| ([0-9.]+)% \\|")

func markdownCounts(s string) map[string]int {
	m := map[string]int{}
	for _, r := range markdownRowRE.FindAllStringSubmatch(s, -1) {
		n, _ := strconv.Atoi(r[2])
		m[r[1]] = n
	}
	return m
}

func csvRows(t *testing.T, s string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	if err != nil {
		t.Fatalf("the CSV report does not parse: %v", err)
	}
	return rows
}

var (
	shareRectRE = regexp.MustCompile(`<rect [^>]*data-kind="(code|state)" data-name="([^"]*)" data-class="([^"]*)" data-count="([0-9]+)" data-share="([0-9.]+)"`)
	dayGroupRE  = regexp.MustCompile(`<g data-date="([0-9-]+)" data-total="([0-9]+)">(.*?)</g>`)
	dayRectRE   = regexp.MustCompile(`<rect [^>]*data-class="([^"]*)" data-count="([0-9]+)"`)
	deviceRowRE = regexp.MustCompile(`<tr data-device="([^"]*)" data-code="([^"]*)" data-class="([^"]*)">`)
)

// htmlChart is what the HTML report's charts and device table say.
type htmlChart struct {
	counts  map[string]int
	shares  map[string]float64
	days    map[string]map[string]int
	totals  map[string]int
	devices map[string]string
}

// parseHTMLChart reads the numbers of the charts from their data-
// attributes; it works on the page as written and on the DOM a browser
// serialises, since both keep attributes in the order written.
func parseHTMLChart(t *testing.T, page string) htmlChart {
	t.Helper()
	c := htmlChart{counts: map[string]int{}, shares: map[string]float64{}, days: map[string]map[string]int{}, totals: map[string]int{}, devices: map[string]string{}}
	for _, m := range shareRectRE.FindAllStringSubmatch(page, -1) {
		n, _ := strconv.Atoi(m[4])
		f, _ := strconv.ParseFloat(m[5], 64)
		label := html.UnescapeString(m[2])
		if m[1] == "state" {
			label = states.Label(label)
		}
		c.counts[label] = n
		c.shares[label] = f
	}
	for _, m := range dayGroupRE.FindAllStringSubmatch(page, -1) {
		n, _ := strconv.Atoi(m[2])
		c.totals[m[1]] = n
		c.days[m[1]] = map[string]int{}
		for _, r := range dayRectRE.FindAllStringSubmatch(m[3], -1) {
			k, _ := strconv.Atoi(r[2])
			c.days[m[1]][r[1]] = k
		}
	}
	for _, m := range deviceRowRE.FindAllStringSubmatch(page, -1) {
		c.devices[html.UnescapeString(m[1])] = stateLabelOf(m[3], html.UnescapeString(m[2]))
	}
	return c
}

func stateLabelOf(class, name string) string {
	if class == fleetreport.ClassState {
		return states.Label(name)
	}
	return name
}

// checkChartAgainstJSON is the check the headless browser's DOM gets too:
// every bar and every day of the charts says what the JSON report says.
func checkChartAgainstJSON(t *testing.T, c htmlChart, j reportJSON) {
	t.Helper()
	if !maps.Equal(c.counts, j.counts()) {
		t.Errorf("the share chart's counts = %v, the JSON's = %v", c.counts, j.counts())
	}
	if !maps.Equal(c.shares, j.shares()) {
		t.Errorf("the share chart's shares = %v, the JSON's = %v", c.shares, j.shares())
	}
	jsonDays := map[string]map[string]int{}
	for _, d := range j.Days {
		jsonDays[d.Date] = map[string]int{}
		for class, n := range d.Counts {
			if n > 0 {
				jsonDays[d.Date][class] = n
			}
		}
	}
	if len(c.days) == 0 && len(jsonDays) > 0 {
		t.Errorf("the day chart has no days; the JSON has %d", len(jsonDays))
	}
	for date, classes := range c.days {
		want := jsonDays[date]
		if want == nil {
			want = map[string]int{}
		}
		if !maps.Equal(classes, want) {
			t.Errorf("the day chart's %s = %v, the JSON's = %v", date, classes, want)
		}
		total := 0
		for _, n := range want {
			total += n
		}
		if c.totals[date] != total {
			t.Errorf("the day chart's total for %s = %d, the JSON's = %d", date, c.totals[date], total)
		}
	}
	for date := range jsonDays {
		if _, ok := c.days[date]; !ok && len(c.days) < fleetreport.MaxChartDays {
			t.Errorf("the JSON's day %s is not in the chart", date)
		}
	}
}

// A generated fleet of 500 devices, every way a Support agent collects
// them: --latest gives each device exactly one outcome, its newest, and
// every format gives the same numbers and a row for each device.
func TestSummarizeFleetOf500(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(wine.TempDir(t), "fleet")
	fleet := makeFleet(t, dir, 500)
	c := NewLatestCounter()
	if err := c.ReadPath(dir); err != nil {
		t.Fatalf("ReadPath: %v", err)
	}
	s := c.Summary()
	s.ListDevices = true
	if s.Outcomes != 500 || len(s.Devices) != 500 {
		t.Fatalf("Outcomes = %d, Devices = %d, want 500 each: one outcome per device", s.Outcomes, len(s.Devices))
	}
	want := map[string]int{}
	byName := map[string]fleetreport.DeviceRow{}
	for _, d := range s.Devices {
		byName[d.Device] = d
	}
	kinds := map[string]int{}
	for _, f := range fleet {
		want[f.want]++
		kinds[f.kind]++
		got, ok := byName[f.name]
		if !ok {
			t.Errorf("%s (%s): no device row", f.name, f.kind)
			continue
		}
		if got.Label() != f.want || got.When != f.when || got.CtrldVersion != f.version || got.Action != f.action {
			t.Errorf("%s (%s): row %s, %q, %q, %q; want %s, %q, %q, %q", f.name, f.kind,
				got.Label(), got.When, got.CtrldVersion, got.Action, f.want, f.when, f.version, f.action)
		}
	}
	t.Logf("kinds of device: %v", kinds)
	if got := counts(s); !maps.Equal(got, want) {
		t.Errorf("counts = %v, want %v", got, want)
	}
	sum := 0.0
	for _, r := range s.Rows {
		sum += r.Share
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("shares add up to %v, want 1", sum)
	}

	j := parseJSONReport(t, format(t, s, "json"))
	if j.Outcomes != 500 || !j.Latest || len(j.Devices) != 500 {
		t.Errorf("JSON: outcomes %d, latest %v, %d devices; want 500, true, 500", j.Outcomes, j.Latest, len(j.Devices))
	}
	if got := j.counts(); !maps.Equal(got, want) {
		t.Errorf("JSON counts = %v, want %v", got, want)
	}
	rounded := 0.0
	for _, f := range j.shares() {
		rounded += f
	}
	if math.Abs(rounded-1) > 0.00005*float64(len(j.shares())) {
		t.Errorf("JSON shares add up to %v, want 1 within rounding", rounded)
	}
	for _, d := range j.Devices {
		if r := byName[d.Device]; d.Code != r.Name() || d.When != r.When || d.CtrldVersion != r.CtrldVersion || d.Action != r.Action || d.Class != r.Class() {
			t.Errorf("JSON device %s = %+v, want the summary's %+v", d.Device, d, r)
		}
	}
	dayTotal := 0
	for _, d := range j.Days {
		for _, n := range d.Counts {
			dayTotal += n
		}
	}
	// The days are every run read, not only each device's newest.
	if dayTotal+j.Undated != j.Runs || j.Runs <= 500 {
		t.Errorf("JSON days hold %d runs and %d are undated, want the %d runs read, more than the 500 devices", dayTotal, j.Undated, j.Runs)
	}

	text := format(t, s, "text")
	if got := textCounts(text); !maps.Equal(got, want) {
		t.Errorf("text counts = %v, want %v", got, want)
	}
	if !strings.HasPrefix(text, "500 devices from ") {
		t.Errorf("text report starts %q, want 500 devices", text[:40])
	}
	for _, f := range fleet {
		if !regexp.MustCompile(`(?m)^` + f.name + ` +` + regexp.QuoteMeta(f.want) + ` `).MatchString(text) {
			t.Errorf("text report has no device row %s %s", f.name, f.want)
		}
	}

	if got := markdownCounts(format(t, s, "markdown")); !maps.Equal(got, want) {
		t.Errorf("markdown counts = %v, want %v", got, want)
	}

	noDevices := s
	noDevices.ListDevices = false
	rows := csvRows(t, format(t, noDevices, "csv"))
	csvCounts := map[string]int{}
	for _, r := range rows[1:] {
		if r[3] == fleetreport.ClassHeadline {
			continue
		}
		n, _ := strconv.Atoi(r[4])
		label := r[0]
		if r[3] == fleetreport.ClassState {
			label = states.Label(label)
		}
		csvCounts[label] = n
	}
	if !maps.Equal(csvCounts, want) {
		t.Errorf("CSV counts = %v, want %v", csvCounts, want)
	}
	rows = csvRows(t, format(t, s, "csv"))
	if got := strings.Join(rows[0], ","); got != "device,code,class,when,ctrld_version,action,bucket,failing_since,failures" {
		t.Errorf("CSV --devices header = %s", got)
	}
	if len(rows) != 501 {
		t.Errorf("CSV --devices has %d rows, want 500 and a header", len(rows))
	}
	for _, r := range rows[1:] {
		d := byName[r[0]]
		if r[1] != d.Name() || r[2] != d.Class() || r[3] != d.When || r[4] != d.CtrldVersion || r[5] != d.Action {
			t.Errorf("CSV device row %v, want %+v", r, d)
		}
	}

	page := format(t, s, "html")
	chart := parseHTMLChart(t, page)
	checkChartAgainstJSON(t, chart, j)
	if len(chart.devices) != 500 {
		t.Errorf("the HTML report lists %d devices, want 500", len(chart.devices))
	}
	for _, f := range fleet {
		if chart.devices[f.name] != f.want {
			t.Errorf("HTML device %s is %q, want %q", f.name, chart.devices[f.name], f.want)
		}
	}
	for _, leak := range []string{canary, strings.ToLower(canary), canary[:12]} {
		for f, out := range map[string]string{"text": text, "json": format(t, s, "json"), "html": page, "csv": format(t, s, "csv"), "markdown": format(t, s, "markdown")} {
			if strings.Contains(out, leak) {
				t.Errorf("the %s report contains %q, read from a log", f, leak)
			}
		}
	}
	if os.Getenv("CTRLD_INSTALL_FLEET_KEEP") != "" {
		os.WriteFile(os.Getenv("CTRLD_INSTALL_FLEET_KEEP"), []byte(page), 0o644)
	}
}

// Without --latest every outcome of every run counts, and the devices are
// still one row each, at their newest outcome.
func TestSummarizeFleetEveryOutcome(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(wine.TempDir(t), "fleet")
	fleet := makeFleet(t, dir, 40)
	latest := NewLatestCounter()
	all := NewCounter()
	for _, c := range []*Counter{latest, all} {
		if err := c.ReadPath(dir); err != nil {
			t.Fatalf("ReadPath: %v", err)
		}
	}
	ls, as := latest.Summary(), all.Summary()
	if as.Outcomes <= ls.Outcomes {
		t.Errorf("every outcome: %d, the newest of each device: %d; want more of the first", as.Outcomes, ls.Outcomes)
	}
	if len(as.Devices) != len(fleet) {
		t.Errorf("every outcome: %d devices, want %d", len(as.Devices), len(fleet))
	}
	for i := range as.Devices {
		a, l := as.Devices[i], ls.Devices[i]
		if a.Device != l.Device || a.Label() != l.Label() || a.When != l.When || a.CtrldVersion != l.CtrldVersion || a.Action != l.Action {
			t.Errorf("device %s: %+v counting every outcome, %+v counting the newest", as.Devices[i].Device, as.Devices[i], ls.Devices[i])
		}
	}
}

// Device names are folder and file names: user input. Every report prints
// them so they stay text: no markup in the HTML or markdown, no formula in
// the spreadsheet, no new line or terminal control in the text.
func TestDeviceNamesStayText(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip(`Windows file names cannot hold < > " or control characters, so these device names never reach summarize there`)
	}
	dir := filepath.Join(wine.TempDir(t), "fleet")
	names := []string{`<script>alert(1)<`, `<b onmouseover=x>bold`, `a"b'c&d`, "line\nbreak", "=HYPERLINK(1)", "esc\x1b[31mred", "[link](x.invalid)", "-"}
	for _, n := range names {
		if err := os.MkdirAll(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n, "ea.txt"), []byte("<result>OK</result>\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := NewLatestCounter()
	if err := c.ReadPath(dir); err != nil {
		t.Fatal(err)
	}
	s := c.Summary()
	s.ListDevices = true
	if len(s.Devices) != len(names) {
		t.Fatalf("%d devices, want %d", len(s.Devices), len(names))
	}
	page := format(t, s, "html")
	for _, raw := range []string{"<script", "<b onmouseover", `a"b`, "\x1b", "href"} {
		if strings.Contains(page, raw) {
			t.Errorf("the HTML report contains %q as written", raw)
		}
	}
	for _, escaped := range []string{"&lt;script&gt;alert(1)&lt;", "&lt;b onmouseover=x&gt;bold", "a&#34;b&#39;c&amp;d", "line?break", "esc?[31mred"} {
		if !strings.Contains(page, escaped) {
			t.Errorf("the HTML report does not contain %q", escaped)
		}
	}
	if !strings.Contains(page, `<meta http-equiv="Content-Security-Policy" content="`+fleetreport.CSP+`">`) {
		t.Errorf("the HTML report has no Content-Security-Policy")
	}
	if m := externalRefRE.FindAllString(page, 5); len(m) > 0 {
		t.Errorf("the HTML report refers to resources: %q", m)
	}
	text := format(t, s, "text")
	if strings.Contains(text, "\x1b") || strings.Contains(text, "line\nbreak") {
		t.Errorf("the text report lets a name carry a control character:\n%q", text)
	}
	md := format(t, s, "markdown")
	if !strings.Contains(md, `\<script\>alert\(1\)\<`) || !strings.Contains(md, `\[link\]\(x\.invalid\)`) {
		t.Errorf("the markdown report does not escape names:\n%s", md)
	}
	for _, r := range csvRows(t, format(t, s, "csv"))[1:] {
		if strings.HasPrefix(r[0], "=") {
			t.Errorf("the CSV report starts a cell with =: %q", r[0])
		}
	}
}
