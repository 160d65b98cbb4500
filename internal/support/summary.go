package support

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

// Row is one code's count in a summary.
type Row struct {
	Code  codes.Code
	Count int
	Share float64 // of all outcomes counted, 0 to 1
}

// Summary is what summarize prints: the codes seen, most frequent first
// (then by name), and what was read besides them.
type Summary struct {
	Rows     []Row
	Outcomes int
	Latest   bool // only the last outcome of each input was counted
	Stats
}

// Summary returns the counts so far.
func (c *Counter) Summary() Summary {
	s := Summary{Stats: c.stats, Latest: c.latest}
	all := codes.All()
	for i, n := range c.counts {
		s.Outcomes += n
		if n > 0 {
			s.Rows = append(s.Rows, Row{Code: all[i], Count: n})
		}
	}
	for i := range s.Rows {
		s.Rows[i].Share = float64(s.Rows[i].Count) / float64(s.Outcomes)
	}
	sort.Slice(s.Rows, func(i, j int) bool {
		if s.Rows[i].Count != s.Rows[j].Count {
			return s.Rows[i].Count > s.Rows[j].Count
		}
		return s.Rows[i].Code.Name < s.Rows[j].Code.Name
	})
	return s
}

// Formats of `ctrld-install summarize`.
var SummaryFormats = []string{"text", "json", "csv", "markdown"}

// WriteSummary prints s in format, one of SummaryFormats. Every value
// printed is a registry value or a number.
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
	}
	return fmt.Errorf("support: unknown summary format %q", format)
}

func writeSummaryText(w io.Writer, s Summary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s from %s%s\n", plural(s.Outcomes, "outcome"), plural(s.Inputs, "input"), latestNote(s))
	if len(s.Rows) > 0 {
		b.WriteString("\ncount   share  code\n")
	}
	for _, r := range s.Rows {
		fmt.Fprintf(&b, "%5d  %5.1f%%  %s (%s)\n", r.Count, r.Share*100, r.Code.Name, facts(r.Code))
		fmt.Fprintf(&b, "%15snext step: %s\n", "", r.Code.NextStep)
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

// facts is "stage listener, exit 41, fatal", or "exit 0, ok" for OK.
func facts(c codes.Code) string {
	s := fmt.Sprintf("exit %d, %s", c.Exit, c.Class)
	if c.Stage != codes.StageNone {
		s = fmt.Sprintf("stage %s, %s", c.Stage, s)
	}
	return s
}

// latestNote says in the first line of a summary that it counts devices'
// last runs, so a report pasted into a ticket cannot be misread.
func latestNote(s Summary) string {
	if s.Latest {
		return ", the last of each"
	}
	return ""
}

func notes(s Summary) []string {
	var out []string
	switch {
	case s.Running > 0 && s.Latest:
		out = append(out, plural(s.Running, "input")+" whose last record is of a run still in progress not counted.")
	case s.Running > 0:
		out = append(out, fmt.Sprintf("%s of a run still in progress not counted.", plural(s.Running, "record")))
	}
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

// share4 rounds a share to four decimals, enough for a fleet of 10,000.
func share4(f float64) float64 { return math.Round(f*1e4) / 1e4 }

type summaryRowJSON struct {
	Code     string  `json:"code"`
	Stage    string  `json:"stage"`
	ExitCode int     `json:"exit_code"`
	Class    string  `json:"class"`
	Count    int     `json:"count"`
	Share    float64 `json:"share"`
	NextStep string  `json:"next_step"`
}

func writeSummaryJSON(w io.Writer, s Summary) error {
	rows := []summaryRowJSON{}
	for _, r := range s.Rows {
		rows = append(rows, summaryRowJSON{
			Code: r.Code.Name, Stage: string(r.Code.Stage), ExitCode: r.Code.Exit, Class: string(r.Code.Class),
			Count: r.Count, Share: share4(r.Share), NextStep: r.Code.NextStep,
		})
	}
	return writeJSON(w, struct {
		Outcomes   int              `json:"outcomes"`
		Inputs     int              `json:"inputs"`
		Latest     bool             `json:"latest"`
		Running    int              `json:"running"`
		LongLines  int              `json:"long_lines"`
		Unreadable int              `json:"unreadable"`
		Codes      []summaryRowJSON `json:"codes"`
	}{s.Outcomes, s.Inputs, s.Latest, s.Running, s.LongLines, s.Unreadable, rows})
}

// writeSummaryCSV has one row per code and nothing else, so a spreadsheet
// can sum the columns itself.
func writeSummaryCSV(w io.Writer, s Summary) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"code", "stage", "exit_code", "class", "count", "share", "next_step"})
	for _, r := range s.Rows {
		cw.Write([]string{
			r.Code.Name, string(r.Code.Stage), strconv.Itoa(r.Code.Exit), string(r.Code.Class),
			strconv.Itoa(r.Count), strconv.FormatFloat(share4(r.Share), 'f', 4, 64), r.Code.NextStep,
		})
	}
	cw.Flush()
	return cw.Error()
}

func writeSummaryMarkdown(w io.Writer, s Summary) error {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s** from %s%s.\n", plural(s.Outcomes, "outcome"), plural(s.Inputs, "input"), latestNote(s))
	if len(s.Rows) > 0 {
		b.WriteString("\n| code | stage | exit | class | count | share | next step |\n")
		b.WriteString("|---|---|---|---|---|---|---|\n")
	}
	for _, r := range s.Rows {
		stage := string(r.Code.Stage)
		if stage == "" {
			stage = "-"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %d | %s | %d | %.1f%% | %s |\n",
			r.Code.Name, stage, r.Code.Exit, r.Code.Class, r.Count, r.Share*100, strings.ReplaceAll(r.Code.NextStep, "|", "\\|"))
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
