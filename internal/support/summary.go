package support

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

// Value is what an outcome counted as: a registered code, or a state
// (State set, Code the zero Code).
type Value struct {
	Code  codes.Code
	State *StatusWord
}

func valueOf(k key) Value {
	if k.isState() {
		s := k.state()
		return Value{State: &s}
	}
	return Value{Code: allCodes[k]}
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
		return stateLabel(v.State.Word)
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

// ClassState is the class of a state in reports: not a code's class,
// since a state is not an outcome of a run.
const ClassState = "state"

// Classes are the classes a report groups outcomes by, in the order charts
// stack them.
var Classes = []string{string(codes.ClassOK), string(codes.ClassAlreadyManaged), string(codes.ClassRetryable), string(codes.ClassFatal), ClassState}

func classIndex(class string) int {
	for i, c := range Classes {
		if c == class {
			return i
		}
	}
	panic("support: unknown class " + class)
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

type dayCounts [5]int

// Summary is what summarize prints: the codes seen, then the states, each
// most frequent first (then by name), the devices, the days, and what was
// read besides them.
type Summary struct {
	Rows     []Row
	Outcomes int         // everything counted: with Latest, one per device
	Latest   bool        // only the newest outcome of each device was counted
	Devices  []DeviceRow // every device, by name
	Days     []Day       // the days with dated outcomes, oldest first
	Undated  int         // outcomes counted without a date
	// ListDevices makes WriteSummary print the devices too (--devices).
	ListDevices bool
	Stats
}

func (c *Counter) addDay(o obs) {
	if !o.dated {
		return
	}
	day := o.at / 86400
	d := c.days[day]
	if d == nil {
		d = new(dayCounts)
		c.days[day] = d
	}
	d[classIndex(valueOf(o.key).Class())]++
}

// Summary returns the counts so far.
func (c *Counter) Summary() Summary {
	s := Summary{Stats: c.stats, Latest: c.latest}
	counts := c.counts
	days := c.days
	if c.latest {
		counts = make([]int, numKeys)
		days = map[int64]*dayCounts{}
	}
	names := make([]string, 0, len(c.devices))
	for n := range c.devices {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d := c.devices[n]
		o := d.last
		if !d.seen {
			o = obs{key: keyEmpty}
		}
		row := DeviceRow{Device: safeName(n), Value: valueOf(o.key), CtrldVersion: o.version, Action: o.action}
		if o.dated {
			row.When = time.Unix(o.at, 0).UTC().Format(time.RFC3339)
		}
		s.Devices = append(s.Devices, row)
		if c.latest {
			counts[o.key]++
			if o.dated {
				day := o.at / 86400
				if days[day] == nil {
					days[day] = new(dayCounts)
				}
				days[day][classIndex(row.Class())]++
			}
		}
	}
	var codeRows, stateRows []Row
	for k, n := range counts {
		s.Outcomes += n
		if n == 0 {
			continue
		}
		r := Row{Value: valueOf(key(k)), Count: n}
		if r.IsState() {
			stateRows = append(stateRows, r)
		} else {
			codeRows = append(codeRows, r)
		}
	}
	byCount := func(rows []Row) {
		sort.SliceStable(rows, func(i, j int) bool {
			if rows[i].Count != rows[j].Count {
				return rows[i].Count > rows[j].Count
			}
			return rows[i].Name() < rows[j].Name()
		})
	}
	byCount(codeRows)
	byCount(stateRows)
	s.Rows = append(codeRows, stateRows...)
	for i := range s.Rows {
		s.Rows[i].Share = float64(s.Rows[i].Count) / float64(s.Outcomes)
	}
	s.Running = counts[keyRunning]
	dated := 0
	dayKeys := make([]int64, 0, len(days))
	for k := range days {
		dayKeys = append(dayKeys, k)
	}
	sort.Slice(dayKeys, func(i, j int) bool { return dayKeys[i] < dayKeys[j] })
	for _, k := range dayKeys {
		d := Day{Date: time.Unix(k*86400, 0).UTC().Format(time.DateOnly), Counts: append([]int(nil), days[k][:]...)}
		dated += d.Total()
		s.Days = append(s.Days, d)
	}
	s.Undated = s.Outcomes - dated
	return s
}

// safeName is a device name as a report may print it: control characters
// and invalid UTF-8 become '?', so a file name cannot start a new line of
// the report or hide text from the terminal.
func safeName(name string) string {
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
var SummaryFormats = []string{"text", "json", "csv", "markdown", "html"}

// WriteSummary prints s in format, one of SummaryFormats. Every value
// printed is a registry value, a state word, a number, a date, a ctrld
// version as parse.DisplayVersion writes it, or a device name as given.
func WriteSummary(w io.Writer, s Summary, format string) error {
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
	return fmt.Errorf("support: unknown summary format %q", format)
}

// headline is the first line of a summary, so a report pasted into a
// ticket cannot be misread: outcomes, or devices each counted once.
func headline(s Summary) string {
	if s.Latest {
		return fmt.Sprintf("%s from %s, the last outcome of each", plural(s.Outcomes, "device"), plural(s.Inputs, "input"))
	}
	return fmt.Sprintf("%s from %s", plural(s.Outcomes, "outcome"), plural(s.Inputs, "input"))
}

func writeSummaryText(w io.Writer, s Summary) error {
	var b strings.Builder
	b.WriteString(headline(s) + "\n")
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
	cols := [][]string{{"device", "code or state", "when", "ctrld", "action"}}
	for _, d := range devs {
		cols = append(cols, []string{d.Device, d.Label(), dash(d.When), dash(d.CtrldVersion), dash(d.Action)})
	}
	width := make([]int, 5)
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
		out = append(out, fmt.Sprintf("%s longer than %d KiB skipped.", plural(s.LongLines, "line"), MaxLine>>10))
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
	v := struct {
		Outcomes   int              `json:"outcomes"`
		Inputs     int              `json:"inputs"`
		Latest     bool             `json:"latest"`
		Running    int              `json:"running"`
		LongLines  int              `json:"long_lines"`
		Unreadable int              `json:"unreadable"`
		Undated    int              `json:"undated"`
		Codes      []summaryRowJSON `json:"codes"`
		States     []stateRowJSON   `json:"states"`
		Days       []dayJSON        `json:"days"`
		Devices    []deviceJSON     `json:"devices,omitempty"`
	}{s.Outcomes, s.Inputs, s.Latest, s.Running, s.LongLines, s.Unreadable, s.Undated, rows, states, days, nil}
	if s.ListDevices {
		v.Devices = []deviceJSON{}
		for _, d := range s.Devices {
			v.Devices = append(v.Devices, deviceJSON{d.Device, d.Name(), d.Class(), d.When, d.CtrldVersion, d.Action})
		}
	}
	return writeJSON(w, v)
}

// writeSummaryCSV has one row per code and state and nothing else, so a
// spreadsheet can sum the columns itself; with ListDevices, one row per
// device instead. A state has no stage or exit, and the class "state".
func writeSummaryCSV(w io.Writer, s Summary) error {
	cw := csv.NewWriter(w)
	if s.ListDevices {
		cw.Write([]string{"device", "code", "class", "when", "ctrld_version", "action"})
		for _, d := range s.Devices {
			cw.Write([]string{csvSafe(d.Device), d.Name(), d.Class(), d.When, d.CtrldVersion, d.Action})
		}
		cw.Flush()
		return cw.Error()
	}
	cw.Write([]string{"code", "stage", "exit_code", "class", "count", "share", "next_step"})
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
		b.WriteString("\n| device | code or state | when | ctrld | action |\n|---|---|---|---|---|\n")
		for _, d := range s.Devices {
			fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", markdownText(d.Device), d.Label(), dash(d.When), dash(d.CtrldVersion), dash(d.Action))
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
