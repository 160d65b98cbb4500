package fleetreport

import (
	"fmt"
	"html"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
)

// The HTML report is one self-contained page: no script, and no style,
// font or image fetched from anywhere (its Content-Security-Policy forbids
// all of them); the charts are inline SVG. Every number a chart shows is
// also in a data- attribute of the element that draws it, so a test (or a
// reader's own tooling) can check the picture against the JSON report.
//
// It holds nothing but codes, state words, counts, shares, dates, ctrld
// versions and the device names it was given, HTML-escaped.

// CSP allows inline styles and nothing else to be loaded.
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

// MaxChartDays bounds the chart of days; older days are in the JSON.
const MaxChartDays = 62

var classColor = map[string]string{
	"ok":              "#2e7d32",
	"already-managed": "#1565c0",
	"retryable":       "#ef6c00",
	"fatal":           "#c62828",
	ClassState:        "#78909c",
}

// The page lists the devices that need attention, the oldest failures of
// each code first, and counts the rest: at most MaxListedTotal in all,
// shared equally among the codes, each listing between MinListed and
// maxListed. A fleet of 100,000 devices with a quarter failing would
// otherwise make a page of megabytes that takes a browser a minute to lay
// out (the bench's render figure: each listed device costs about half a
// millisecond there), and the devices failing longest are the ones to
// start with. The CSV and JSON reports with --devices list every device.
const (
	MaxListedTotal = 800
	maxListed      = 200
	MinListed      = 10
)

// ListedPerCode is how many devices each of n codes lists on the page.
func ListedPerCode(n int) int {
	if n == 0 {
		return maxListed
	}
	return min(maxListed, max(MinListed, MaxListedTotal/n))
}

// printListed is how many of them print: the page must print on one or
// two A4 pages whatever the fleet, and a code's oldest failures are
// enough to act on.
const printListed = 5

var pageStyle = `
:root { color-scheme: light; }
body { font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: #212121; margin: 24px auto; max-width: 1000px; padding: 0 16px; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 15px; margin: 20px 0 6px; }
h3 { font-size: 13px; margin: 12px 0 4px; }
p { margin: 4px 0; }
.muted { color: #616161; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid #e0e0e0; vertical-align: top; }
th { background: #f5f5f5; font-weight: 600; }
td.nowrap { white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.dev { overflow-wrap: anywhere; }
code { font: 12px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; white-space: nowrap; }
.headline { font-size: 15px; margin: 8px 0; }
.headline span { margin-right: 18px; white-space: nowrap; }
.headline b { font-size: 20px; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: -1px; }
.legend span { margin-right: 14px; white-space: nowrap; }
svg text { font: 11px system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; fill: #212121; }
svg .axis { stroke: #9e9e9e; stroke-width: 1; }
.print-only { display: none; }
.group { break-inside: avoid; }
.group table { width: auto; min-width: 60%; }
@page { size: A4; margin: 10mm; }
@media print {
  body { font-size: 8.5pt; margin: 0; max-width: none; padding: 0; -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  h1 { font-size: 13pt; }
  h2 { font-size: 10pt; margin: 8px 0 3px; break-after: avoid; }
  h3 { font-size: 8.5pt; margin: 4px 0 1px; }
  th, td { padding: 1px 4px; }
  code { font-size: 7.5pt; }
  .headline { font-size: 9pt; margin: 4px 0; }
  .headline b { font-size: 11pt; }
  svg { max-width: 100%; height: auto; }
  .screen-only { display: none; }
  .print-only { display: block; }
  #rows td:last-child { font-size: 7.5pt; }
  .groups { columns: 2; column-gap: 6mm; }
  .group table { width: 100%; min-width: 0; font-size: 7pt; }
  .group tbody tr:nth-child(n+` + strconv.Itoa(printListed+1) + `) { display: none; }
}
`

func writeSummaryHTML(w io.Writer, s Summary) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	// CSP is a constant with no character to escape in an attribute.
	fmt.Fprintf(&b, "<meta http-equiv=\"Content-Security-Policy\" content=\"%s\">\n", CSP)
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	b.WriteString("<title>ctrld-install fleet report</title>\n<style>" + pageStyle + "</style>\n</head>\n<body>\n")
	b.WriteString("<h1>ctrld-install fleet report</h1>\n")
	fmt.Fprintf(&b, "<p data-outcomes=\"%d\" data-inputs=\"%d\" data-latest=\"%t\">%s.</p>\n", s.Outcomes, s.Inputs, s.Latest, esc(headline(s)))
	writeHeadline(&b, s)
	if len(s.Days) > 0 {
		fmt.Fprintf(&b, "<p class=\"muted\">Runs dated %s to %s (UTC)%s.</p>\n", s.Days[0].Date, s.Days[len(s.Days)-1].Date, undatedNote(s))
	}
	for _, n := range notes(s) {
		fmt.Fprintf(&b, "<p class=\"muted\">%s</p>\n", esc(n))
	}

	b.WriteString("<h2>Share of each code and state</h2>\n")
	writeShareChart(&b, s)
	writeLegend(&b)

	b.WriteString("<h2>Runs per day, by class</h2>\n")
	writeDayChart(&b, s)

	b.WriteString("<h2>Codes and states, and what to do next</h2>\n")
	writeRowTable(&b, s)

	writeAttention(&b, s)
	writeDeviceSection(&b, s)
	b.WriteString("</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHeadline prints the devices in each bucket, and what each bucket
// holds, from the registry's classes and the states' buckets.
func writeHeadline(b *strings.Builder, s Summary) {
	fmt.Fprintf(b, "<p id=\"headline\" class=\"headline\" data-devices=\"%d\"", len(s.Devices))
	for _, k := range Buckets {
		fmt.Fprintf(b, " data-%s=\"%d\"", strings.ReplaceAll(k.Key(), "_", "-"), s.Headline[k])
	}
	b.WriteString(">")
	for _, k := range Buckets {
		fmt.Fprintf(b, "<span><b>%d</b> %s</span>", s.Headline[k], k)
	}
	b.WriteString("</p>\n<p class=\"muted\">")
	if !s.Latest {
		fmt.Fprintf(b, "Devices by their newest outcome (%s). ", esc(plural(len(s.Devices), "device")))
	}
	for i, k := range Buckets {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(b, "<i>%s</i>: %s", k, esc(bucketMembers(k)))
	}
	b.WriteString(".</p>\n")
}

// bucketMembers names what a bucket holds: the classes of the registry's
// codes and the state words that land in it.
func bucketMembers(k Bucket) string {
	var parts []string
	for _, class := range []codes.Class{codes.ClassOK, codes.ClassAlreadyManaged, codes.ClassRetryable, codes.ClassFatal} {
		var names []string
		for _, c := range codes.All() {
			if c.Class == class && (Value{Code: &c}).Bucket() == k {
				names = append(names, c.Name)
			}
		}
		switch {
		case len(names) == 0:
		case len(names) <= 2:
			parts = append(parts, strings.Join(names, ", "))
		default:
			parts = append(parts, "the "+string(class)+" codes")
		}
	}
	for _, st := range states.All {
		if stateBucket(st.Word) == k {
			parts = append(parts, states.Label(st.Word))
		}
	}
	return strings.Join(parts, ", ")
}

func esc(s string) string { return html.EscapeString(s) }

func undatedNote(s Summary) string {
	if s.Undated == 0 {
		return ""
	}
	return fmt.Sprintf("; %s without a date", plural(s.Undated, "run"))
}

func shareAttr(f float64) string { return strconv.FormatFloat(share4(f), 'f', 4, 64) }

// writeShareChart draws one horizontal bar per code and state, its length
// the share of everything counted.
func writeShareChart(b *strings.Builder, s Summary) {
	if len(s.Rows) == 0 {
		b.WriteString("<p class=\"muted\">Nothing was counted.</p>\n")
		return
	}
	const (
		rowH    = 20
		barMaxW = 380
	)
	// The labels end where the bars start; the longest must fit whole
	// (LISTENER_CONFIGURED_ADDR_UNAVAILABLE), or its start is cut off at
	// the picture's edge. 7.5 px is a wide capital of the 11 px font.
	labelW := 250
	for _, r := range s.Rows {
		labelW = max(labelW, int(float64(len(r.Label()))*7.5)+12)
	}
	width := labelW + barMaxW + 90
	height := len(s.Rows)*rowH + 4
	fmt.Fprintf(b, "<svg id=\"shares\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"share of each code and state\" data-total=\"%d\">\n",
		width, height, width, height, s.Outcomes)
	for i, r := range s.Rows {
		y := i*rowH + 2
		kind := "code"
		if r.IsState() {
			kind = "state"
		}
		w := r.Share * barMaxW
		if r.Count > 0 && w < 1 {
			w = 1
		}
		fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", labelW-6, y+14, esc(r.Label()))
		fmt.Fprintf(b, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" data-kind=\"%s\" data-name=\"%s\" data-class=\"%s\" data-count=\"%d\" data-share=\"%s\"><title>%s: %d (%s)</title></rect>\n",
			labelW, y+2, w, rowH-6, classColor[r.Class()], kind, esc(r.Name()), r.Class(), r.Count, shareAttr(r.Share), esc(r.Label()), r.Count, percent(r.Share))
		fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%d\">%d (%s)</text>\n", float64(labelW)+w+6, y+14, r.Count, percent(r.Share))
	}
	b.WriteString("</svg>\n")
}

func writeLegend(b *strings.Builder) {
	b.WriteString("<p class=\"legend muted\">")
	for _, c := range Classes {
		fmt.Fprintf(b, "<span><span class=\"swatch\" style=\"background:%s\"></span>%s</span>", classColor[c], c)
	}
	b.WriteString("</p>\n")
}

// chartDays are the days the chart shows: every calendar day from the
// first dated outcome to the last, at most MaxChartDays of them, the
// newest kept; days with nothing counted are there, empty.
func chartDays(s Summary) (days []Day, before int) {
	if len(s.Days) == 0 {
		return nil, 0
	}
	byDate := map[string]Day{}
	for _, d := range s.Days {
		byDate[d.Date] = d
	}
	last, _ := time.Parse(time.DateOnly, s.Days[len(s.Days)-1].Date)
	first, _ := time.Parse(time.DateOnly, s.Days[0].Date)
	if span := int(last.Sub(first).Hours()/24) + 1; span > MaxChartDays {
		first = last.AddDate(0, 0, -(MaxChartDays - 1))
	}
	for t := first; !t.After(last); t = t.AddDate(0, 0, 1) {
		date := t.Format(time.DateOnly)
		d, ok := byDate[date]
		if !ok {
			d = Day{Date: date, Counts: make([]int, len(Classes))}
		}
		days = append(days, d)
	}
	for _, d := range s.Days {
		if d.Date < first.Format(time.DateOnly) {
			before += d.Total()
		}
	}
	return days, before
}

// writeDayChart draws one bar per day, stacked by class.
func writeDayChart(b *strings.Builder, s Summary) {
	days, before := chartDays(s)
	if len(days) == 0 {
		b.WriteString("<p class=\"muted\">No outcome has a date.</p>\n")
		return
	}
	const (
		width  = 720
		height = 210
		left   = 44
		top    = 10
		plotH  = 160
	)
	plotW := width - left - 10
	peak := 1
	for _, d := range days {
		peak = max(peak, d.Total())
	}
	scale := niceMax(peak)
	slot := float64(plotW) / float64(len(days))
	barW := min(28.0, slot*0.8)
	fmt.Fprintf(b, "<svg id=\"days\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"runs per day, by class\" data-days=\"%d\">\n",
		width, height, width, height, len(days))
	fmt.Fprintf(b, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", left, top+plotH, width-10, top+plotH)
	fmt.Fprintf(b, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", left, top, left, top+plotH)
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%d</text>\n", left-4, top+8, scale)
	fmt.Fprintf(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n", left-4, top+plotH)
	every := (len(days) + 7) / 8
	for i, d := range days {
		x := float64(left) + slot*float64(i) + (slot-barW)/2
		fmt.Fprintf(b, "<g data-date=\"%s\" data-total=\"%d\">", d.Date, d.Total())
		y := float64(top + plotH)
		for ci, class := range Classes {
			n := d.Counts[ci]
			if n == 0 {
				continue
			}
			h := float64(n) / float64(scale) * plotH
			y -= h
			fmt.Fprintf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" data-class=\"%s\" data-count=\"%d\"><title>%s %s: %d</title></rect>",
				x, y, barW, h, classColor[class], class, n, d.Date, class, n)
		}
		b.WriteString("</g>\n")
		if i%every == 0 || i == len(days)-1 {
			fmt.Fprintf(b, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n", x+barW/2, top+plotH+16, d.Date[5:])
		}
	}
	b.WriteString("</svg>\n")
	if s.Latest {
		b.WriteString("<p class=\"muted\">Every run in the files read, on the day it ended, and not only each device's last: a device that runs daily adds a run every day, and one that runs every 15 minutes 96. The counts above are each device's newest outcome.</p>\n")
	} else {
		b.WriteString("<p class=\"muted\">Every run counted above, on the day it ended.</p>\n")
	}
	if before > 0 {
		fmt.Fprintf(b, "<p class=\"muted\">%s dated before %s are not drawn (see the JSON report).</p>\n", plural(before, "run"), days[0].Date)
	}
}

// niceMax rounds a chart's top up to 1, 2 or 5 times a power of ten.
func niceMax(n int) int {
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
	}
}

func writeRowTable(b *strings.Builder, s Summary) {
	if len(s.Rows) == 0 {
		return
	}
	b.WriteString("<table id=\"rows\">\n<thead><tr><th>code or state</th><th>stage</th><th class=\"num\">exit</th><th>class</th><th class=\"num\">count</th><th class=\"num\">share</th><th>next step</th></tr></thead>\n<tbody>\n")
	for _, r := range s.Rows {
		stage, exit := "-", "-"
		if !r.IsState() {
			exit = strconv.Itoa(r.Code.Exit)
			if r.Code.Stage != "" {
				stage = string(r.Code.Stage)
			}
		}
		fmt.Fprintf(b, "<tr data-name=\"%s\" data-count=\"%d\"><td class=\"nowrap\"><span class=\"swatch\" style=\"background:%s\"></span>%s</td><td>%s</td><td class=\"num\">%s</td><td>%s</td><td class=\"num\">%d</td><td class=\"num\">%s</td><td>%s</td></tr>\n",
			esc(r.Name()), r.Count, classColor[r.Class()], codeHTML(r.Label()), stage, exit, r.Class(), r.Count, percent(r.Share), esc(r.NextStep()))
	}
	b.WriteString("</tbody>\n</table>\n")
}

// codeHTML is a code or state word in <code>, which never wraps (see
// pageStyle): a table gives its column the width of its longest code, and
// a code cut or wrapped in print would read as another code.
func codeHTML(name string) string {
	return "<code>" + esc(name) + "</code>"
}

// writeAttention lists the devices that need attention, grouped by code
// (the most devices first), each group its oldest failures first: when the
// current streak of failures began, and how many runs it holds. Each group
// lists ListedPerCode devices on screen and printListed in print, and counts
// the rest.
func writeAttention(b *strings.Builder, s Summary) {
	// Indices into s.Devices: a copy of each row would double the memory
	// a large fleet's report takes.
	groups := map[string][]int32{}
	for i, d := range s.Devices {
		if d.Bucket() == BucketAttention {
			groups[d.Label()] = append(groups[d.Label()], int32(i))
		}
	}
	n := s.Headline[BucketAttention]
	fmt.Fprintf(b, "<section class=\"attention\" data-count=\"%d\">\n<h2>%s that need attention, by code, the oldest failure first</h2>\n", n, esc(capitalize(plural(n, "device"))))
	if n == 0 {
		b.WriteString("<p class=\"muted\">None.</p>\n</section>\n")
		return
	}
	names := make([]string, 0, len(groups))
	for name := range groups {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool {
		if a, c := len(groups[names[i]]), len(groups[names[j]]); a != c {
			return a > c
		}
		return names[i] < names[j]
	})
	fmt.Fprintf(b, "<p class=\"muted\">Failing since: the end of the first run of the device's current streak of runs that needed attention; failed: the runs in that streak. Both count only the runs in the files read. Each code lists its %d oldest failures (in print, its %d oldest); <code>summarize --format csv --devices</code> lists every device.</p>\n", ListedPerCode(len(names)), printListed)
	b.WriteString("<div class=\"groups\">\n")
	for _, name := range names {
		devs := groups[name]
		sort.Slice(devs, func(i, j int) bool {
			a, c := &s.Devices[devs[i]], &s.Devices[devs[j]]
			switch {
			case (a.FailingSince == "") != (c.FailingSince == ""):
				return a.FailingSince != ""
			case a.FailingSince != c.FailingSince:
				return a.FailingSince < c.FailingSince
			}
			return a.Device < c.Device
		})
		listed := min(len(devs), ListedPerCode(len(names)))
		v := s.Devices[devs[0]].Value
		fmt.Fprintf(b, "<div class=\"group\" data-code=\"%s\" data-class=\"%s\" data-count=\"%d\" data-listed=\"%d\">\n", esc(v.Name()), v.Class(), len(devs), listed)
		fmt.Fprintf(b, "<h3><span class=\"swatch\" style=\"background:%s\"></span>%s <span class=\"muted\">%s</span></h3>\n", classColor[v.Class()], codeHTML(v.Label()), esc(plural(len(devs), "device")))
		b.WriteString("<table><thead><tr><th>device</th><th>failing since</th><th class=\"num\">failed</th><th>last (UTC)</th></tr></thead>\n<tbody>\n")
		for _, i := range devs[:listed] {
			d := &s.Devices[i]
			fmt.Fprintf(b, "<tr data-att=\"%s\" data-code=\"%s\" data-since=\"%s\" data-failures=\"%d\"><td class=\"dev\">%s</td><td class=\"nowrap\">%s</td><td class=\"num\">%s</td><td class=\"nowrap\">%s</td></tr>\n",
				esc(d.Device), esc(d.Name()), dayOf(d.FailingSince), d.Failures, esc(d.Device), dash(dayOf(d.FailingSince)), times(d.Failures), dash(dayOf(d.When)))
		}
		b.WriteString("</tbody></table>\n")
		if rest := len(devs) - listed; rest > 0 {
			fmt.Fprintf(b, "<p class=\"muted screen-only\">and %s more with this code, not listed.</p>\n", esc(plural(rest, "device")))
		}
		if rest := len(devs) - min(listed, printListed); rest > 0 {
			fmt.Fprintf(b, "<p class=\"muted print-only\">and %s more, on screen or in the CSV report.</p>\n", esc(plural(rest, "device")))
		}
		b.WriteString("</div>\n")
	}
	b.WriteString("</div>\n</section>\n")
}

// dayOf is the date of an RFC 3339 time, "" for "".
func dayOf(rfc string) string {
	if len(rfc) < 10 {
		return ""
	}
	return rfc[:10]
}

// times is "once", "14 times"; "-" when not known.
func times(n int) string {
	switch n {
	case 0:
		return "-"
	case 1:
		return "once"
	}
	return strconv.Itoa(n) + " times"
}

// writeDeviceSection is the table of every device, with --devices only:
// on screen, since a fleet of thousands is mostly healthy rows that no
// printed page needs.
func writeDeviceSection(b *strings.Builder, s Summary) {
	if !s.ListDevices {
		return
	}
	fmt.Fprintf(b, "<section class=\"devices screen-only\">\n<h2>%s, the newest outcome of each</h2>\n", esc(capitalize(plural(len(s.Devices), "device"))))
	if len(s.Devices) == 0 {
		b.WriteString("</section>\n")
		return
	}
	b.WriteString("<table id=\"devices\">\n<thead><tr><th>device</th><th>code or state</th><th>class</th><th>when (UTC)</th><th>ctrld</th><th>action</th><th>failing since</th><th class=\"num\">failed</th></tr></thead>\n<tbody>\n")
	for _, d := range s.Devices {
		fmt.Fprintf(b, "<tr data-device=\"%s\" data-code=\"%s\" data-class=\"%s\"><td class=\"dev\">%s</td><td class=\"nowrap\"><span class=\"swatch\" style=\"background:%s\"></span>%s</td><td>%s</td><td class=\"nowrap\">%s</td><td>%s</td><td>%s</td><td class=\"nowrap\">%s</td><td class=\"num\">%s</td></tr>\n",
			esc(d.Device), esc(d.Name()), d.Class(), esc(d.Device), classColor[d.Class()], codeHTML(d.Label()), d.Class(), dash(d.When), esc(dash(d.CtrldVersion)), esc(dash(d.Action)), dash(dayOf(d.FailingSince)), times(d.Failures))
	}
	b.WriteString("</tbody>\n</table>\n</section>\n")
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
