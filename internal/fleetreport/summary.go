package fleetreport

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
)

// Value is what an outcome counted as: a registered code, or a state
// (State set, Code nil). Both point into the registries, so a fleet's
// hundred thousand rows hold two words each, not a copy of the code.
type Value struct {
	Code  *codes.Code
	State *states.State
}

// IsState reports whether v is a state rather than a code.
func (v Value) IsState() bool { return v.State != nil }

// Name is the code's name or the state's word ("" for the empty value).
func (v Value) Name() string {
	if v.State != nil {
		return v.State.Word
	}
	return v.Code.Name
}

// Label is Name, with the empty value spelled so it can be seen.
func (v Value) Label() string {
	if v.State != nil {
		return states.Label(v.State.Word)
	}
	return v.Code.Name
}

// Class is the code's class, or "state".
func (v Value) Class() string {
	if v.State != nil {
		return ClassState
	}
	return string(v.Code.Class)
}

// NextStep is the code's or the state's next step.
func (v Value) NextStep() string {
	if v.State != nil {
		return v.State.NextStep
	}
	return v.Code.NextStep
}

// Bucket is what a fleet report's headline counts a device as, by its
// newest outcome: whether anyone has to act on it.
type Bucket string

const (
	// BucketHealthy: ctrld is provisioned and running (class ok).
	BucketHealthy Bucket = "healthy"
	// BucketAttention: a run failed (class fatal or retryable) or the
	// device's state cannot be read; someone has to look.
	BucketAttention Bucket = "needs attention"
	// BucketNotDeployed: ctrld-install has not run, ctrld was removed on
	// purpose, or nothing was reported; scoping decides, not a repair.
	BucketNotDeployed Bucket = "not deployed"
	// BucketSettled: ctrld is protected by someone else's deactivation PIN
	// (class already-managed); nothing the job can change, and nothing
	// wrong with the device.
	BucketSettled Bucket = "settled"
	// BucketRunning: a run was in progress when the state was read.
	BucketRunning Bucket = "running"
)

// Buckets are the buckets in the order the headline lists them.
var Buckets = []Bucket{BucketHealthy, BucketAttention, BucketNotDeployed, BucketSettled, BucketRunning}

// Key is the bucket as a JSON key or CSV value: "needs_attention".
func (b Bucket) Key() string { return strings.ReplaceAll(string(b), " ", "_") }

// Bucket is the headline's bucket of a device whose newest outcome is v:
// a code's by its class in the registry, a state's by whether something
// must be done about it.
func (v Value) Bucket() Bucket {
	if v.State != nil {
		return stateBucket(v.State.Word)
	}
	switch v.Code.Class {
	case codes.ClassOK:
		return BucketHealthy
	case codes.ClassAlreadyManaged:
		return BucketSettled
	case codes.ClassRetryable, codes.ClassFatal:
		return BucketAttention
	}
	// A new class must say where the headline counts it.
	panic("fleetreport: no bucket for class " + string(v.Code.Class))
}

// stateBucket is where the headline counts a device in a state: only a
// state that something must be done about needs attention.
func stateBucket(word string) Bucket {
	switch word {
	case states.NeverRun, states.NotInstalled, states.Uninstalled, states.Empty:
		return BucketNotDeployed
	case states.Running:
		return BucketRunning
	case states.StatusFailed, states.InvalidRecord:
		return BucketAttention
	}
	// A new state must say where the headline counts it.
	panic("fleetreport: no bucket for state " + word)
}

// ClassHeadline is the class of the CSV report's rows that count the
// devices in each bucket: not a code's, and not to be summed with them.
const ClassHeadline = "headline"

// ClassState is the class of a state in reports: not a code's class,
// since a state is not an outcome of a run.
const ClassState = "state"

// Classes are the classes a report groups outcomes by, in the order charts
// stack them.
var Classes = []string{string(codes.ClassOK), string(codes.ClassAlreadyManaged), string(codes.ClassRetryable), string(codes.ClassFatal), ClassState}

// ClassIndex is the position of class in Classes.
func ClassIndex(class string) int {
	for i, c := range Classes {
		if c == class {
			return i
		}
	}
	panic("fleetreport: unknown class " + class)
}

// Row is one code's or state's count in a summary.
type Row struct {
	Value
	Count int
	Share float64 // of everything counted, 0 to 1
}

// DeviceRow is one device and its newest outcome.
type DeviceRow struct {
	Device string // as given: the folder or file name; control characters replaced
	Value
	When         string // RFC 3339 UTC, "" when the outcome has no date
	CtrldVersion string // "" when not known
	Action       string // "" when not known
	// For a device that needs attention: how many of its runs in a row
	// ended needing attention, up to and with its newest, and when the
	// first of them ended (RFC 3339 UTC, "" when undated). Only the runs
	// found in the files read count: a rotated log that was not collected
	// shortens the streak.
	Failures     int
	FailingSince string
}

// Day is how many of the outcomes counted are of one day (UTC), by class
// (in the order of Classes).
type Day struct {
	Date   string // YYYY-MM-DD
	Counts []int
}

// Total is the day's count over all classes.
func (d Day) Total() int {
	n := 0
	for _, c := range d.Counts {
		n += c
	}
	return n
}

// Summary is what summarize prints: the codes seen, then the states, each
// most frequent first (then by name), the devices, the days, and what was
// read besides them.
type Summary struct {
	Rows     []Row
	Outcomes int         // everything counted: with Latest, one per device
	Latest   bool        // only the newest outcome of each device was counted
	Devices  []DeviceRow // every device, by name
	// Headline counts the devices in each bucket, by their newest outcome.
	Headline map[Bucket]int
	// Days are the days with dated runs, oldest first: every outcome read,
	// with or without Latest.
	Days    []Day
	Runs    int // every outcome read, dated or not
	Undated int // outcomes read without a date
	// ListDevices makes Write print the devices too (--devices).
	ListDevices bool
	Stats
}

// Stats describes what was read besides the outcomes.
type Stats struct {
	Inputs     int // files and streams read
	Unreadable int // files that could not be opened or read to the end
	LongLines  int // lines over MaxLine, skipped
	Running    int // outcomes counted as the state RUNNING: a run in progress
	MaxLine    int // the longest line read, in bytes
}

// SafeName is a device name as a report may print it: control characters
// and invalid UTF-8 become '?', so a file name cannot start a new line of
// the report or hide text from the terminal.
func SafeName(name string) string {
	clean := true
	for i := 0; i < len(name) && clean; i++ {
		clean = name[i] >= 0x20 && name[i] < 0x7f
	}
	if clean {
		// Printable ASCII, as nearly every device name is: no copy.
		return name
	}
	var b strings.Builder
	for i := 0; i < len(name); {
		r, size := utf8.DecodeRuneInString(name[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteByte('?')
		case r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0x2028 || r == 0x2029 || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// share4 rounds a share to four decimals, enough for a fleet of 10,000.
func share4(f float64) float64 { return math.Round(f*1e4) / 1e4 }

// percent prints a share as "42.9%".
func percent(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" }

// Formats of `ctrld-install summarize`.
var Formats = []string{"text", "json", "csv", "markdown", "html"}

// Write prints s in format, one of Formats. Every value
// printed is a registry value, a state word, a number, a date, a ctrld
// version as parse.DisplayVersion writes it, or a device name as given.
func Write(w io.Writer, s Summary, format string) error {
	switch format {
	case "text":
		return writeSummaryText(w, s)
	case "json":
		return writeSummaryJSON(w, s)
	case "csv":
		return writeSummaryCSV(w, s)
	case "markdown":
		return writeSummaryMarkdown(w, s)
	case "html":
		return writeSummaryHTML(w, s)
	}
	return fmt.Errorf("fleetreport: unknown format %q", format)
}

// headline is the first line of a summary, so a report pasted into a
// ticket cannot be misread: outcomes, or devices each counted once.
func headline(s Summary) string {
	if s.Latest {
		return fmt.Sprintf("%s from %s, the last outcome of each", plural(s.Outcomes, "device"), plural(s.Inputs, "input"))
	}
	return fmt.Sprintf("%s from %s", plural(s.Outcomes, "outcome"), plural(s.Inputs, "input"))
}

// bucketLine is the headline's second line: the devices in each bucket,
// "healthy 307, needs attention 40, not deployed 100, settled 3, running
// 25". Counting every outcome, the devices are counted apart, by the
// newest outcome of each, and it says so.
func bucketLine(s Summary, number func(int) string) string {
	parts := make([]string, len(Buckets))
	for i, b := range Buckets {
		parts[i] = string(b) + " " + number(s.Headline[b])
	}
	line := strings.Join(parts, ", ")
	if !s.Latest {
		line += fmt.Sprintf(" (%s, by the newest outcome of each)", plural(len(s.Devices), "device"))
	}
	return line
}

func writeSummaryText(w io.Writer, s Summary) error {
	var b strings.Builder
	b.WriteString(headline(s) + "\n")
	b.WriteString(bucketLine(s, strconv.Itoa) + "\n")
	if len(s.Rows) > 0 {
		b.WriteString("\ncount   share  code or state\n")
	}
	for _, r := range s.Rows {
		fmt.Fprintf(&b, "%5d  %6s  %s (%s)\n", r.Count, percent(r.Share), r.Label(), facts(r.Value))
		fmt.Fprintf(&b, "%15snext step: %s\n", "", r.NextStep())
	}
	if s.ListDevices && len(s.Devices) > 0 {
		b.WriteString("\n")
		writeDevicesText(&b, s.Devices)
	}
	if notes := notes(s); len(notes) > 0 {
		b.WriteString("\n")
		for _, n := range notes {
			b.WriteString(n + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeDevicesText(b *strings.Builder, devs []DeviceRow) {
	cols := [][]string{{"device", "code or state", "when", "ctrld", "action", "failing since", "failures"}}
	for _, d := range devs {
		cols = append(cols, []string{d.Device, d.Label(), dash(d.When), dash(d.CtrldVersion), dash(d.Action), dash(d.FailingSince), failures(d)})
	}
	width := make([]int, len(cols[0]))
	for _, row := range cols {
		for i, v := range row {
			width[i] = max(width[i], utf8.RuneCountInString(v))
		}
	}
	for _, row := range cols {
		for i, v := range row {
			if i == len(row)-1 {
				b.WriteString(v + "\n")
				continue
			}
			b.WriteString(v + strings.Repeat(" ", width[i]-utf8.RuneCountInString(v)+2))
		}
	}
}

// failures is a device's count of failures in a row, "-" for a device
// that does not need attention.
func failures(d DeviceRow) string {
	if d.Failures == 0 {
		return "-"
	}
	return strconv.Itoa(d.Failures)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// facts is "stage listener, exit 41, fatal", "exit 0, ok" for OK, or
// "state" for a state.
func facts(v Value) string {
	if v.IsState() {
		return ClassState
	}
	c := v.Code
	s := fmt.Sprintf("exit %d, %s", c.Exit, c.Class)
	if c.Stage != codes.StageNone {
		s = fmt.Sprintf("stage %s, %s", c.Stage, s)
	}
	return s
}

func notes(s Summary) []string {
	var out []string
	if s.LongLines > 0 {
		out = append(out, fmt.Sprintf("%s longer than %d KiB skipped.", plural(s.LongLines, "line"), s.MaxLine>>10))
	}
	if s.Unreadable > 0 {
		out = append(out, fmt.Sprintf("%s could not be read to the end.", plural(s.Unreadable, "file")))
	}
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

type summaryRowJSON struct {
	Code     string  `json:"code"`
	Stage    string  `json:"stage"`
	ExitCode int     `json:"exit_code"`
	Class    string  `json:"class"`
	Count    int     `json:"count"`
	Share    float64 `json:"share"`
	NextStep string  `json:"next_step"`
}

type stateRowJSON struct {
	State    string  `json:"state"`
	Count    int     `json:"count"`
	Share    float64 `json:"share"`
	Meaning  string  `json:"meaning"`
	NextStep string  `json:"next_step"`
}

type dayJSON struct {
	Date   string         `json:"date"`
	Counts map[string]int `json:"counts"`
}

type deviceJSON struct {
	Device       string `json:"device"`
	Code         string `json:"code"`
	Class        string `json:"class"`
	When         string `json:"when"`
	CtrldVersion string `json:"ctrld_version"`
	Action       string `json:"action"`
	Bucket       string `json:"bucket"`
	FailingSince string `json:"failing_since"`
	Failures     int    `json:"failures"`
}

// headlineJSON is the headline: devices, and how many are in each bucket.
type headlineJSON struct {
	Devices        int `json:"devices"`
	Healthy        int `json:"healthy"`
	NeedsAttention int `json:"needs_attention"`
	NotDeployed    int `json:"not_deployed"`
	Settled        int `json:"settled"`
	Running        int `json:"running"`
}

func writeSummaryJSON(w io.Writer, s Summary) error {
	rows := []summaryRowJSON{}
	states := []stateRowJSON{}
	for _, r := range s.Rows {
		share := share4(r.Share)
		if r.IsState() {
			states = append(states, stateRowJSON{State: r.State.Word, Count: r.Count, Share: share, Meaning: r.State.Meaning, NextStep: r.State.NextStep})
			continue
		}
		rows = append(rows, summaryRowJSON{
			Code: r.Code.Name, Stage: string(r.Code.Stage), ExitCode: r.Code.Exit, Class: string(r.Code.Class),
			Count: r.Count, Share: share, NextStep: r.Code.NextStep,
		})
	}
	days := []dayJSON{}
	for _, d := range s.Days {
		m := map[string]int{}
		for i, c := range Classes {
			m[c] = d.Counts[i]
		}
		days = append(days, dayJSON{Date: d.Date, Counts: m})
	}
	h := s.Headline
	v := struct {
		Outcomes   int              `json:"outcomes"`
		Inputs     int              `json:"inputs"`
		Latest     bool             `json:"latest"`
		Headline   headlineJSON     `json:"headline"`
		Running    int              `json:"running"`
		LongLines  int              `json:"long_lines"`
		Unreadable int              `json:"unreadable"`
		Runs       int              `json:"runs"`
		Undated    int              `json:"undated"`
		Codes      []summaryRowJSON `json:"codes"`
		States     []stateRowJSON   `json:"states"`
		Days       []dayJSON        `json:"days"`
		Devices    []deviceJSON     `json:"devices,omitempty"`
	}{s.Outcomes, s.Inputs, s.Latest,
		headlineJSON{len(s.Devices), h[BucketHealthy], h[BucketAttention], h[BucketNotDeployed], h[BucketSettled], h[BucketRunning]},
		s.Running, s.LongLines, s.Unreadable, s.Runs, s.Undated, rows, states, days, nil}
	if s.ListDevices {
		v.Devices = []deviceJSON{}
		for _, d := range s.Devices {
			v.Devices = append(v.Devices, deviceJSON{d.Device, d.Name(), d.Class(), d.When, d.CtrldVersion, d.Action, d.Bucket().Key(), d.FailingSince, d.Failures})
		}
	}
	return writeJSON(w, v)
}

// writeSummaryCSV has the headline's buckets first, as rows of the class
// "headline" (a count of devices, its share of all devices), then one row
// per code and state, so a spreadsheet that filters out the headline can
// sum the columns itself. With ListDevices, one row per device instead,
// whose bucket column is the headline. A state has no stage or exit, and
// the class "state".
func writeSummaryCSV(w io.Writer, s Summary) error {
	cw := csv.NewWriter(w)
	if s.ListDevices {
		cw.Write([]string{"device", "code", "class", "when", "ctrld_version", "action", "bucket", "failing_since", "failures"})
		for _, d := range s.Devices {
			cw.Write([]string{csvSafe(d.Device), d.Name(), d.Class(), d.When, d.CtrldVersion, d.Action, d.Bucket().Key(), d.FailingSince, strconv.Itoa(d.Failures)})
		}
		cw.Flush()
		return cw.Error()
	}
	cw.Write([]string{"code", "stage", "exit_code", "class", "count", "share", "next_step"})
	for _, b := range Buckets {
		share := 0.0
		if len(s.Devices) > 0 {
			share = float64(s.Headline[b]) / float64(len(s.Devices))
		}
		cw.Write([]string{b.Key(), "", "", ClassHeadline, strconv.Itoa(s.Headline[b]), strconv.FormatFloat(share4(share), 'f', 4, 64), ""})
	}
	for _, r := range s.Rows {
		share := strconv.FormatFloat(share4(r.Share), 'f', 4, 64)
		if r.IsState() {
			cw.Write([]string{r.State.Word, "", "", ClassState, strconv.Itoa(r.Count), share, r.State.NextStep})
			continue
		}
		cw.Write([]string{
			r.Code.Name, string(r.Code.Stage), strconv.Itoa(r.Code.Exit), string(r.Code.Class),
			strconv.Itoa(r.Count), share, r.Code.NextStep,
		})
	}
	cw.Flush()
	return cw.Error()
}

// csvSafe keeps a spreadsheet from reading a device name as a formula.
func csvSafe(s string) string {
	if s != "" && s != "-" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func writeSummaryMarkdown(w io.Writer, s Summary) error {
	var b strings.Builder
	head := headline(s)
	n, rest, _ := strings.Cut(head, " from ")
	fmt.Fprintf(&b, "**%s** from %s.\n", n, rest)
	fmt.Fprintf(&b, "\n%s.\n", capitalize(bucketLine(s, func(n int) string { return "**" + strconv.Itoa(n) + "**" })))
	if len(s.Rows) > 0 {
		b.WriteString("\n| code or state | stage | exit | class | count | share | next step |\n")
		b.WriteString("|---|---|---|---|---|---|---|\n")
	}
	for _, r := range s.Rows {
		if r.IsState() {
			fmt.Fprintf(&b, "| `%s` | - | - | %s | %d | %s | %s |\n",
				r.Label(), ClassState, r.Count, percent(r.Share), strings.ReplaceAll(r.NextStep(), "|", "\\|"))
			continue
		}
		stage := string(r.Code.Stage)
		if stage == "" {
			stage = "-"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %d | %s | %d | %s | %s |\n",
			r.Code.Name, stage, r.Code.Exit, r.Code.Class, r.Count, percent(r.Share), strings.ReplaceAll(r.Code.NextStep, "|", "\\|"))
	}
	if s.ListDevices && len(s.Devices) > 0 {
		b.WriteString("\n| device | code or state | when | ctrld | action | failing since | failures |\n|---|---|---|---|---|---|---|\n")
		for _, d := range s.Devices {
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s | %s | %s |\n", markdownText(d.Device), d.Label(), dash(d.When), dash(d.CtrldVersion), dash(d.Action), dash(d.FailingSince), failures(d))
		}
	}
	if notes := notes(s); len(notes) > 0 {
		b.WriteString("\n")
		for _, n := range notes {
			b.WriteString(n + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// markdownText escapes every ASCII punctuation character, so a device name
// is shown as text and never read as markup, a link or HTML.
func markdownText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
