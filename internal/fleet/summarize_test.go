package fleet

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/decide"
	"github.com/Control-D-Inc/ctrld-install/internal/fleetreport"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// Lines as each surface carries them.
var (
	bindLine    = report.Prefix + codes.FailureLine(codes.VerbProvisioning, codes.Must(codes.ListenerBindFailed))
	timeoutLine = report.Prefix + codes.FailureLine(codes.VerbProvisioning, codes.Must(codes.CtrldTimeout))
	successLine = report.Prefix + outcome.LineProvisioned
	skippedLine = report.Prefix + outcome.LineSkipped
)

// recordJSON is an outcome record exactly as ctrld-install writes it.
func recordJSON(t testing.TB, name string) string {
	s := record.FromOutcome(decide.Installer(outcome.Install, name), "0.1.0")
	b, err := json.MarshalIndent(record.New(s, time.Date(2026, 8, 18, 12, 0, 0, 0, time.UTC)), "", "  ")
	if err != nil {
		t.Fatalf("json.MarshalIndent(record of %s): %v", name, err)
	}
	return string(b) + "\n"
}

// rolledBackRecordJSON is the record of a change that was rolled back:
// its code is the change's cause.
func rolledBackRecordJSON(t testing.TB) string {
	o := decide.Installer(outcome.Install, codes.APIDeviceInvalid)
	o.Action, o.Rollback = outcome.ActionRolledBack, outcome.RollbackOK
	b, err := json.Marshal(record.New(record.FromOutcome(o, "0.1.0"), time.Date(2026, 8, 18, 12, 0, 0, 0, time.UTC)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// summaryJSON is the --json summary as one line.
func summaryJSON(t testing.TB, name string) string {
	b, err := json.Marshal(record.FromOutcome(decide.Installer(outcome.Install, name), "0.1.0"))
	if err != nil {
		t.Fatalf("json.Marshal(summary of %s): %v", name, err)
	}
	return string(b)
}

func count(t *testing.T, input string) fleetreport.Summary {
	t.Helper()
	c := NewCounter()
	if err := c.Read(strings.NewReader(input)); err != nil {
		t.Fatalf("Read: %v", err)
	}
	return c.Summary()
}

// counts are the rows of a summary by code name or state label.
func counts(s fleetreport.Summary) map[string]int {
	m := map[string]int{}
	for _, r := range s.Rows {
		m[r.Label()] = r.Count
	}
	return m
}

func TestSummarizeInputs(t *testing.T) {
	bind := map[string]int{codes.ListenerBindFailed: 1}
	longRegion := "{\n" + strings.Repeat("noise line that is not JSON at all\n", 2500) + bindLine + "\n"
	for _, tc := range []struct {
		name  string
		input string
		want  map[string]int
	}{
		{"stdout", "ctrld-install: running ctrld start (ctrld 1.5.0, attempt 1 of 3, time left 5m0s)\n" + bindLine + "\nctrld-install: next step: x\n", bind},
		{"no final newline", bindLine, bind},
		{"CRLF", "a\r\n" + bindLine + "\r\n", bind},
		{"install.log", "Nov 29 10:14:03 mac-17 installd[812]: ./postinstall: " + bindLine + "\n", bind},
		{"jamf policy log", "Executing Policy ctrld\nRunning script ctrld-install.sh...\nScript exit code: 41\nScript result: " + bindLine + "\n", bind},
		{"intune log", `<![LOG[[Win32App] stdout: ` + bindLine + `]LOG]!><time="10:14:03.1234567" date="11-29-2026" component="AppActionProcessor" context="" type="1" thread="12" file="">` + "\n", bind},
		{"--log file", "2026-11-29T10:14:03Z " + bindLine + "\n2026-11-29T10:14:03Z ctrld-install: next step: x\n", bind},
		{"ctrld's own identifier line", "provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)\n", bind},
		{"two in one line", bindLine + " " + bindLine + "\n", map[string]int{codes.ListenerBindFailed: 2}},
		{"retries are not outcomes", "ctrld-install: attempt 1 failed: stage=bootstrap code=API_UNREACHABLE (exit 31); retrying in 10s\n" + timeoutLine + "\n", map[string]int{codes.CtrldTimeout: 1}},
		{"success and skipped", successLine + "\n" + skippedLine + "\n", map[string]int{codes.OK: 2}},
		{"success needs the prefix", "provisioning succeeded (exit 0)\n", nil},
		{"stage disagrees", "provisioning failed: stage=bootstrap code=LISTENER_BIND_FAILED (exit 41)\n", nil},
		{"exit disagrees", "provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 40)\n", nil},
		{"unregistered", "provisioning failed: stage=listener code=LISTENER_EXPLODED (exit 49)\n", nil},
		{"lower-case code", "provisioning failed: stage=listener code=listener_bind_failed (exit 41)\n", nil},
		{"long exit", "provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 0041)\n", nil},
		{"no closing parenthesis", "provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41\n", nil},
		{"jamf extension attribute", "<result>LISTENER_BIND_FAILED</result>\n", bind},
		{"extension attribute of OK", "<result>OK</result>\n", map[string]int{codes.OK: 1}},
		{"status words are states", "<result>NEVER_RUN</result>\n<result>RUNNING</result>\n", map[string]int{states.NeverRun: 1, states.Running: 1}},
		{"every state word", "<result>NOT_INSTALLED</result><result>STATUS_FAILED</result><result>UNINSTALLED</result><result>INVALID_RECORD</result><result></result>\n",
			map[string]int{states.NotInstalled: 1, states.StatusFailed: 1, states.Uninstalled: 1, states.InvalidRecord: 1, "(empty)": 1}},
		{"an unknown word is nothing", "<result>NOT_A_WORD</result>\n", nil},
		{"spaced result", "<result> LISTENER_BIND_FAILED </result>\n", nil},
		{"unclosed result", "<result>LISTENER_BIND_FAILED\n", nil},
		{"outcome record", recordJSON(t, codes.ListenerBindFailed), bind},
		{"record with a byte-order mark", "\ufeff" + recordJSON(t, codes.ListenerBindFailed), bind},
		{"record of success", recordJSON(t, codes.OK), map[string]int{codes.OK: 1}},
		{"record of a rolled-back change", rolledBackRecordJSON(t), map[string]int{codes.APIDeviceInvalid: 1}},
		{"concatenated records", recordJSON(t, codes.ListenerBindFailed) + recordJSON(t, codes.CtrldTimeout) + recordJSON(t, codes.ListenerBindFailed),
			map[string]int{codes.ListenerBindFailed: 2, codes.CtrldTimeout: 1}},
		{"JSON lines of --json summaries", summaryJSON(t, codes.ListenerBindFailed) + "\n" + summaryJSON(t, codes.OK) + "\n",
			map[string]int{codes.ListenerBindFailed: 1, codes.OK: 1}},
		{"compact array", "[" + summaryJSON(t, codes.ListenerBindFailed) + "," + summaryJSON(t, codes.CtrldTimeout) + "]\n",
			map[string]int{codes.ListenerBindFailed: 1, codes.CtrldTimeout: 1}},
		{"indented array", "[\n  " + strings.ReplaceAll(recordJSON(t, codes.ListenerBindFailed), "\n", "\n  ") + ",\n  " + strings.ReplaceAll(recordJSON(t, codes.CtrldTimeout), "\n", "\n  ") + "\n]\n",
			map[string]int{codes.ListenerBindFailed: 1, codes.CtrldTimeout: 1}},
		{"record among log lines", "Script result: checking\n" + recordJSON(t, codes.ListenerBindFailed) + "done\n", bind},
		{"record that disagrees", `{"version":1,"result":"failed","stage":"listener","code":"LISTENER_BIND_FAILED","exit_code":40}` + "\n", nil},
		{"record result disagrees", `{"version":1,"result":"ok","stage":"listener","code":"LISTENER_BIND_FAILED","exit_code":41}` + "\n", nil},
		{"record of another version", `{"version":2,"result":"failed","stage":"listener","code":"LISTENER_BIND_FAILED","exit_code":41}` + "\n", nil},
		{"record without exit", `{"version":1,"result":"failed","stage":"listener","code":"LISTENER_BIND_FAILED"}` + "\n", nil},
		{"record with a string exit", `{"result":"failed","stage":"listener","code":"LISTENER_BIND_FAILED","exit_code":"41"}` + "\n", nil},
		{"codes listing entry", `{"code":"LISTENER_BIND_FAILED","stage":"listener","exit_code":41,"class":"fatal"}` + "\n", nil},
		{"status --format json of a device never run", `{"code":"NEVER_RUN","result":"NEVER_RUN","version":1}` + "\n", map[string]int{states.NeverRun: 1}},
		{"status --format json of a damaged record", `{"code":"INVALID_RECORD","result":"INVALID_RECORD","version":1}` + "\n", map[string]int{states.InvalidRecord: 1}},
		{"status's line where there is no record", "ctrld-install: no outcome recorded: ctrld-install has never run here\n", map[string]int{states.NeverRun: 1}},
		{"status's line of a damaged record", "ctrld-install: the outcome record cannot be read\n", map[string]int{states.InvalidRecord: 1}},
		{"status's line of a run in progress", "ctrld-install: a run is in progress: phase started, pid 42, since 2026-11-29T10:00:00Z\n", map[string]int{states.Running: 1}},
		{"repair", "ctrld-install: repair applied, ctrld restarted (exit 0)\n", map[string]int{codes.OK: 1}},
		{"removals are a state", "ctrld-install: uninstall succeeded (exit 0)\nctrld-install: not installed, nothing to do (exit 0)\n", map[string]int{states.Uninstalled: 2}},
		// The --log file of a --json run has the text line and, after a
		// timestamp, the same outcome as JSON: one run, one count.
		{"--log of a --json run", "2026-11-29T10:14:03Z " + bindLine + "\n2026-11-29T10:14:03Z " + summaryJSON(t, codes.ListenerBindFailed) + "\n", bind},
		{"structured log with the line in its message", `{"level":"info","msg":"` + bindLine + `"}` + "\n", bind},
		{"stray brace", "config {\n{ not json\n" + bindLine + "\n}\n", bind},
		{"unbalanced brace never closed", "{\n" + bindLine + "\n", bind},
		{"region longer than MaxObject", longRegion, bind},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == nil {
				want = map[string]int{}
			}
			s := count(t, tc.input)
			if got := counts(s); !maps.Equal(got, want) {
				t.Errorf("counts = %v, want %v", got, want)
			}
			if s.Running != want[states.Running] {
				t.Errorf("Running = %d, want %d", s.Running, want[states.Running])
			}
		})
	}
}

func TestSummarizeRunningRecords(t *testing.T) {
	b, err := json.MarshalIndent(record.Running(record.CommandInstall, record.PhaseCtrldRunning, 4242, "0.1.0", nil, "", time.Now()), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	s := count(t, string(b)+"\n"+recordJSON(t, codes.ListenerBindFailed))
	if s.Running != 1 {
		t.Errorf("Running = %d, want 1", s.Running)
	}
	if s.Outcomes != 2 {
		t.Errorf("Outcomes = %d, want 2: the run in progress is the state RUNNING", s.Outcomes)
	}
	if got, want := counts(s), (map[string]int{states.Running: 1, codes.ListenerBindFailed: 1}); !maps.Equal(got, want) {
		t.Errorf("counts = %v, want %v", got, want)
	}
}

func TestSummarizeLongLines(t *testing.T) {
	input := strings.Repeat("x", 3*MaxLine) + bindLine + "\n" + bindLine + "\n" + strings.Repeat("y", MaxLine)
	s := count(t, input)
	if s.LongLines != 2 {
		t.Errorf("LongLines = %d, want 2: the two overlong lines are skipped whole, identifier included", s.LongLines)
	}
	if got, want := counts(s), (map[string]int{codes.ListenerBindFailed: 1}); !maps.Equal(got, want) {
		t.Errorf("counts = %v, want %v", got, want)
	}

	// A line that fits exactly is read.
	fit := strings.Repeat("z", MaxLine-len(bindLine)-1) + bindLine + "\n"
	s = count(t, fit)
	if s.LongLines != 0 {
		t.Errorf("line of exactly MaxLine: LongLines = %d, want 0", s.LongLines)
	}
	if s.Outcomes != 1 {
		t.Errorf("line of exactly MaxLine: Outcomes = %d, want 1", s.Outcomes)
	}

	// An overlong line ends a JSON region, which is then read as text.
	s = count(t, "{\n"+bindLine+"\n"+strings.Repeat("w", 2*MaxLine)+"\n"+recordJSON(t, codes.CtrldTimeout))
	if got, want := counts(s), (map[string]int{codes.ListenerBindFailed: 1, codes.CtrldTimeout: 1}); !maps.Equal(got, want) {
		t.Errorf("overlong line in a JSON region: counts = %v, want %v", got, want)
	}
}

func TestSummarizeEncodings(t *testing.T) {
	log := "Script result: x\r\n" + bindLine + "\r\n" + "caf\u00e9 \U0001F600 " + timeoutLine + "\r\n"
	want := map[string]int{codes.ListenerBindFailed: 1, codes.CtrldTimeout: 1}

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(log))
	zw.Close()
	// A rotated log is often several gzip members in one file.
	zw = gzip.NewWriter(&gz)
	zw.Write([]byte(recordJSON(t, codes.OK)))
	zw.Close()
	if got, want := counts(count(t, gz.String())), (map[string]int{codes.ListenerBindFailed: 1, codes.CtrldTimeout: 1, codes.OK: 1}); !maps.Equal(got, want) {
		t.Errorf("gzip members: counts = %v, want %v", got, want)
	}

	for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
		var b bytes.Buffer
		for _, u := range utf16.Encode([]rune("\ufeff" + log)) {
			binary.Write(&b, order, u)
		}
		if got := counts(count(t, b.String())); !maps.Equal(got, want) {
			t.Errorf("UTF-16 %v: counts = %v, want %v", order, got, want)
		}
	}

	// A corrupt gzip stream is an input that cannot be read to the end.
	c := NewCounter()
	if err := c.Read(bytes.NewReader(gz.Bytes()[:20])); err == nil {
		t.Errorf("Read(corrupt gzip) = nil, want an error")
	}
	if got := c.Summary().Unreadable; got != 1 {
		t.Errorf("corrupt gzip: Unreadable = %d, want 1", got)
	}
}

// A bufio reader that delivers one byte at a time must give the same
// result: state carries across reads, not just across lines.
func TestSummarizeOneByteReads(t *testing.T) {
	input := recordJSON(t, codes.ListenerBindFailed) + bindLine + "\n[" + summaryJSON(t, codes.OK) + "]\n"
	c := NewCounter()
	if err := c.Read(oneByteReader{strings.NewReader(input)}); err != nil {
		t.Fatalf("Read: %v", err)
	}
	if got, want := counts(c.Summary()), (map[string]int{codes.ListenerBindFailed: 2, codes.OK: 1}); !maps.Equal(got, want) {
		t.Errorf("counts = %v, want %v", got, want)
	}
}

type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

// The canary stands for a provisioning token in a log. It is planted in
// every place a parser could be tempted to copy from: ordinary lines,
// bogus identifiers of every grammar, records, a region read as text and
// an overlong line. No format may print it.
func TestSummarizeNeverEchoesInput(t *testing.T) {
	lower := strings.ToLower(canary)
	upper := strings.ToUpper(canary)
	input := strings.Join([]string{
		"ctrld start --cd-org " + canary,
		"provisioning failed: stage=listener code=" + upper + " (exit 41)",
		"provisioning failed: stage=" + lower + " code=LISTENER_BIND_FAILED (exit 41)",
		"provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41) " + canary,
		"<result>" + upper + "</result>",
		"<result>" + canary + "</result>",
		`{"version":1,"result":"failed","stage":"listener","code":"` + upper + `","exit_code":41}`,
		`{"version":1,"result":"` + canary + `","stage":"listener","code":"LISTENER_BIND_FAILED","exit_code":41}`,
		`{"version":1,"result":"failed","stage":"listener","code":"LISTENER_BIND_FAILED","exit_code":41,"message":"` + canary + `"}`,
		`{"msg":"` + canary + `"}`,
		"{ " + canary,
		strings.Repeat(canary, MaxLine/len(canary)+1),
		"ctrld-install: uninstall failed: stage=service code=" + upper + " (exit 56)",
		"ctrld-install: uninstall failed: stage=" + lower + " code=DEACTIVATION_PIN_REQUIRED (exit 126)",
		"ctrld-install: uninstall succeeded (exit 0) " + canary,
		"ctrld-install: verify failed: stage=service code=SERVICE_NOT_RUNNING (exit 55) " + canary,
		"ctrld-install: not installed: " + canary,
		`{"version":1,"result":"ok","action":"` + canary + `","stage":"","code":"OK","exit_code":0}`,
		bindLine,
	}, "\n") + "\n"
	for _, c := range []*Counter{NewCounter(), NewLatestCounter()} {
		if err := c.Read(strings.NewReader(input)); err != nil {
			t.Fatalf("Read: %v", err)
		}
		s := c.Summary()
		want := map[string]int{codes.ListenerBindFailed: 3, states.Uninstalled: 1}
		if s.Latest {
			want = map[string]int{codes.ListenerBindFailed: 1}
		}
		if got := counts(s); !maps.Equal(got, want) {
			t.Errorf("latest=%v: counts = %v, want %v", s.Latest, got, want)
		}
		for _, f := range fleetreport.Formats {
			var b bytes.Buffer
			if err := fleetreport.Write(&b, s, f); err != nil {
				t.Fatalf("fleetreport.Write(%s): %v", f, err)
			}
			for _, leak := range []string{canary, lower, upper, canary[:12], "CANARY"} {
				if strings.Contains(b.String(), leak) {
					t.Errorf("fleetreport.Write(%s) wrote:\n%s\nwant it not to contain %q", f, b.String(), leak)
				}
			}
		}
	}
}

// Every printed failure line and success line of the registry is counted,
// so the grammar here cannot drift from the printer's.
func TestSummarizeEveryCode(t *testing.T) {
	var b strings.Builder
	for _, c := range codes.All() {
		if c.IsOK() {
			b.WriteString(successLine + "\n")
		} else {
			b.WriteString(report.Prefix + codes.FailureLine(codes.VerbProvisioning, c) + "\n")
		}
		b.WriteString("<result>" + c.Name + "</result>\n")
		b.WriteString(recordJSON(t, c.Name))
	}
	s := count(t, b.String())
	if got, want := len(s.Rows), len(codes.All()); got != want {
		t.Fatalf("Summary has %d rows, want %d, one per code", got, want)
	}
	for _, r := range s.Rows {
		if r.Count != 3 {
			t.Errorf("%s: Count = %d, want 3", r.Code.Name, r.Count)
		}
	}
}

// lineSource produces n lines cycling through lines, without holding them
// all, so a test can feed more input than it would want to keep in memory.
// every, when set, replaces each every-th line with extra.
type lineSource struct {
	lines []string
	n, i  int
	pend  []byte
	buf   []byte
	every int
	extra string
	onRow func(i int)
}

func (s *lineSource) Read(p []byte) (int, error) {
	total := 0
	for len(p) > 0 {
		if len(s.pend) == 0 {
			if s.i == s.n {
				if total == 0 {
					return 0, io.EOF
				}
				return total, nil
			}
			if s.onRow != nil {
				s.onRow(s.i)
			}
			line := s.lines[s.i%len(s.lines)]
			if s.every > 0 && s.i%s.every == s.every-1 {
				line = s.extra
			}
			s.buf = append(append(s.buf[:0], line...), '\n')
			s.pend = s.buf
			s.i++
		}
		k := copy(p, s.pend)
		s.pend, p, total = s.pend[k:], p[k:], total+k
	}
	return total, nil
}

// mixedLines is one cycle of a realistic fleet log: a few outcomes among
// progress lines, noise and near misses. Each cycle holds 5 outcomes and
// one state.
func mixedLines(t testing.TB) []string {
	return []string{
		"Nov 29 10:14:03 mac-17 installd[812]: ./postinstall: ctrld-install: running ctrld start (ctrld 1.5.0, attempt 1 of 3, time left 5m0s)",
		"Nov 29 10:14:04 mac-17 installd[812]: ./postinstall: ctrld-install: attempt 1 failed: stage=bootstrap code=API_UNREACHABLE (exit 31); retrying in 10s",
		"Nov 29 10:14:05 mac-17 installd[812]: ./postinstall: " + bindLine,
		"Nov 29 10:14:05 mac-17 installd[812]: ./postinstall: ctrld-install: next step: Stop or reconfigure the other program",
		"Nov 29 10:14:05 mac-17 installd[812]: PackageKit: Install Failed: Error Domain=PKInstallErrorDomain Code=112 " + canary,
		summaryJSON(t, codes.CtrldTimeout),
		"<result>LISTENER_BIND_FAILED</result>",
		"provisioning failed: stage=service code=LISTENER_BIND_FAILED (exit 41)",
		"2026-11-29T10:14:03Z " + successLine,
		"<result>NEVER_RUN</result>",
		"<result>" + canary + "</result>",
		`{"version":1,"result":"ok","stage":"","code":"OK","exit_code":0,"class":"ok","source":"post-conditions","attempts":1}`,
	}
}

var mixedWant = func(cycles int) map[string]int {
	return map[string]int{codes.ListenerBindFailed: 2 * cycles, codes.CtrldTimeout: cycles, codes.OK: 2 * cycles, states.NeverRun: cycles}
}

// 100,000 lines of mixed input, every count checked.
func TestSummarize100kLines(t *testing.T) {
	lines := mixedLines(t)
	const cycles = 100_000 / 12
	c := NewCounter()
	t0 := time.Now()
	if err := c.Read(&lineSource{lines: lines, n: cycles * len(lines)}); err != nil {
		t.Fatalf("Read: %v", err)
	}
	t.Logf("%d lines in %v", cycles*len(lines), time.Since(t0))
	s := c.Summary()
	if got, want := counts(s), mixedWant(cycles); !maps.Equal(got, want) {
		t.Errorf("counts = %v, want %v", got, want)
	}
	if got, want := s.Outcomes, 6*cycles; got != want {
		t.Errorf("Outcomes = %d, want %d", got, want)
	}
	if got, want := s.Rows[0].Code.Name, codes.ListenerBindFailed; got != want {
		t.Errorf("Rows[0] is %s, want %s: ties sort by name: LISTENER_BIND_FAILED before OK", got, want)
	}
	if got, want := s.Rows[1].Code.Name, codes.OK; got != want {
		t.Errorf("Rows[1] is %s, want %s", got, want)
	}
	if got, want := s.Rows[0].Share, 2.0/6; !(math.Abs(got-want) <= 1e-9) {
		t.Errorf("Rows[0].Share = %v, want %v within 1e-9", got, want)
	}
}

// Memory does not grow with input: the heap stays the same size while a
// million lines (and a few overlong ones) stream through.
func TestSummarizeMemoryIsBounded(t *testing.T) {
	if os.Getenv("CTRLD_INSTALL_SUMMARIZE_FULL") == "" {
		t.Skip("streams a million lines; CI sets CTRLD_INSTALL_SUMMARIZE_FULL=1")
	}
	const n = 1_000_000
	// What earlier tests left (the 100 MiB inputs of the test before it
	// in CI's run) is not this reader's: collected first, and what stays
	// is the baseline.
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak uint64
	src := &lineSource{lines: mixedLines(t), n: n, every: 10_000, extra: strings.Repeat("x", 3*MaxLine), onRow: func(i int) {
		if i%100_000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	}}
	c := NewCounter()
	if err := c.Read(src); err != nil {
		t.Fatalf("Read: %v", err)
	}
	s := c.Summary()
	if got, want := s.LongLines, n/10_000; got != want {
		t.Errorf("LongLines = %d, want %d", got, want)
	}
	if s.Outcomes <= 400_000 {
		t.Errorf("Outcomes = %d, want more than 400000", s.Outcomes)
	}
	grew := peak - min(peak, base)
	t.Logf("peak heap in use %.1f MiB over %d lines, %.1f MiB over the baseline", float64(peak)/(1<<20), n, float64(grew)/(1<<20))
	// A counter holds about 200 KiB of buffers; the rest is the runtime and
	// garbage the collector has not reclaimed yet. Input held would be >1 GiB.
	if limit := uint64(32 << 20); grew >= limit {
		t.Errorf("the heap in use grew %d bytes, want less than %d", grew, limit)
	}
}

func TestSummaryOrderAndFormats(t *testing.T) {
	c := NewCounter()
	if err := c.Read(strings.NewReader(strings.Repeat(timeoutLine+"\n", 3) + strings.Repeat(bindLine+"\n", 3) + successLine + "\n")); err != nil {
		t.Fatalf("Read: %v", err)
	}
	c.Unreadable()
	s := c.Summary()
	if got, want := []string{s.Rows[0].Code.Name, s.Rows[1].Code.Name, s.Rows[2].Code.Name}, []string{codes.CtrldTimeout, codes.ListenerBindFailed, codes.OK}; !slices.Equal(got, want) {
		t.Fatalf("Summary rows = %q, want %q", got, want)
	}

	var b bytes.Buffer
	if err := fleetreport.Write(&b, s, "text"); err != nil {
		t.Fatalf("fleetreport.Write(text): %v", err)
	}
	bind := codes.Must(codes.ListenerBindFailed)
	if got, want := b.String(), "7 outcomes from 1 input\n"+
		"healthy 1, needs attention 0, not deployed 0, settled 0, running 0 (1 device, by the newest outcome of each)\n\n"+
		"count   share  code or state\n"+
		"    3   42.9%  CTRLD_TIMEOUT (stage installer, exit 64, retryable)\n"+
		"               next step: "+codes.Must(codes.CtrldTimeout).NextStep+"\n"+
		"    3   42.9%  LISTENER_BIND_FAILED (stage listener, exit 41, fatal)\n"+
		"               next step: "+bind.NextStep+"\n"+
		"    1   14.3%  OK (exit 0, ok)\n"+
		"               next step: Nothing to do.\n"+
		"\n1 file could not be read to the end.\n"; got != want {
		t.Errorf("fleetreport.Write(text) wrote:\n%s\nwant:\n%s", got, want)
	}

	b.Reset()
	if err := fleetreport.Write(&b, s, "json"); err != nil {
		t.Fatalf("fleetreport.Write(json): %v", err)
	}
	var j struct {
		Outcomes, Inputs, Unreadable int
		Codes                        []struct {
			Code, Stage, Class string
			NextStep           string `json:"next_step"`
			ExitCode           int    `json:"exit_code"`
			Count              int
			Share              float64
		}
	}
	if err := json.Unmarshal(b.Bytes(), &j); err != nil {
		t.Fatalf("fleetreport.Write(json) output does not parse: %v", err)
	}
	if j.Outcomes != 7 {
		t.Errorf("fleetreport.Write(json): outcomes = %d, want 7", j.Outcomes)
	}
	if j.Unreadable != 1 {
		t.Errorf("fleetreport.Write(json): unreadable = %d, want 1", j.Unreadable)
	}
	if len(j.Codes) != 3 {
		t.Fatalf("fleetreport.Write(json) listed %d codes, want 3", len(j.Codes))
	}
	if got, want := j.Codes[1].Code, "LISTENER_BIND_FAILED"; got != want {
		t.Errorf("fleetreport.Write(json): codes[1].code = %q, want %q", got, want)
	}
	if got, want := j.Codes[1].ExitCode, 41; got != want {
		t.Errorf("fleetreport.Write(json): codes[1].exit_code = %d, want %d", got, want)
	}
	if got, want := j.Codes[1].Share, 0.4286; got != want {
		t.Errorf("fleetreport.Write(json): codes[1].share = %v, want %v", got, want)
	}
	if want := `"next_step": "` + bind.NextStep + `"`; !strings.Contains(b.String(), want) {
		t.Errorf("fleetreport.Write(json) wrote:\n%s\nwant it to contain %s", b.String(), want)
	}

	b.Reset()
	if err := fleetreport.Write(&b, s, "csv"); err != nil {
		t.Fatalf("fleetreport.Write(csv): %v", err)
	}
	if got, want := b.String(), "code,stage,exit_code,class,count,share,next_step\n"+
		"healthy,,,headline,1,1.0000,\nneeds_attention,,,headline,0,0.0000,\nnot_deployed,,,headline,0,0.0000,\nsettled,,,headline,0,0.0000,\nrunning,,,headline,0,0.0000,\n"+
		"CTRLD_TIMEOUT,installer,64,retryable,3,0.4286,\""+codes.Must(codes.CtrldTimeout).NextStep+"\"\n"+
		"LISTENER_BIND_FAILED,listener,41,fatal,3,0.4286,\""+bind.NextStep+"\"\n"+
		"OK,,0,ok,1,0.1429,Nothing to do.\n"; got != want {
		t.Errorf("fleetreport.Write(csv) wrote:\n%s\nwant:\n%s", got, want)
	}

	b.Reset()
	if err := fleetreport.Write(&b, s, "markdown"); err != nil {
		t.Fatalf("fleetreport.Write(markdown): %v", err)
	}
	for _, want := range []string{
		"**7 outcomes** from 1 input.\n\nHealthy **1**, needs attention **0**, not deployed **0**, settled **0**, running **0** (1 device, by the newest outcome of each).\n\n| code or state | stage | exit | class | count | share | next step |\n|---|---|---|---|---|---|---|\n",
		"| `LISTENER_BIND_FAILED` | listener | 41 | fatal | 3 | 42.9% | " + bind.NextStep + " |\n",
		"| `OK` | - | 0 | ok | 1 | 14.3% | Nothing to do. |\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("fleetreport.Write(markdown) wrote:\n%s\nwant it to contain %q", b.String(), want)
		}
	}

	if err := fleetreport.Write(&b, s, "xml"); err == nil {
		t.Errorf("fleetreport.Write(xml) = nil, want an error")
	}
}

func TestEmptySummary(t *testing.T) {
	s := count(t, "nothing to see\n")
	for f, want := range map[string]string{
		"text": "0 outcomes from 1 input\nhealthy 0, needs attention 0, not deployed 1, settled 0, running 0 (1 device, by the newest outcome of each)\n",
		"csv": "code,stage,exit_code,class,count,share,next_step\n" +
			"healthy,,,headline,0,0.0000,\nneeds_attention,,,headline,0,0.0000,\nnot_deployed,,,headline,1,1.0000,\nsettled,,,headline,0,0.0000,\nrunning,,,headline,0,0.0000,\n",
		"markdown": "**0 outcomes** from 1 input.\n\nHealthy **0**, needs attention **0**, not deployed **1**, settled **0**, running **0** (1 device, by the newest outcome of each).\n",
	} {
		var b bytes.Buffer
		if err := fleetreport.Write(&b, s, f); err != nil {
			t.Fatalf("fleetreport.Write(%s): %v", f, err)
		}
		if got := b.String(); got != want {
			t.Errorf("fleetreport.Write(%s) = %q, want %q", f, got, want)
		}
	}
	var b bytes.Buffer
	if err := fleetreport.Write(&b, s, "json"); err != nil {
		t.Fatalf("fleetreport.Write(json): %v", err)
	}
	if want := `"codes": []`; !strings.Contains(b.String(), want) {
		t.Errorf("fleetreport.Write(json) wrote:\n%s\nwant it to contain %s", b.String(), want)
	}
}

func TestReadPath(t *testing.T) {
	dir := wine.TempDir(t)
	tree := filepath.Join(dir, "fleet")
	write := func(rel, content string) {
		p := filepath.Join(tree, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("mac-1/ctrld-install-result.json", recordJSON(t, codes.ListenerBindFailed))
	write("mac-2/ctrld-install-result.json", recordJSON(t, codes.OK))
	write("mac-3/install.log", "Nov 29 installd[1]: ./postinstall: "+timeoutLine+"\n")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(bindLine + "\n"))
	zw.Close()
	write("mac-3/install.log.0.gz", gz.String())
	mkfifo(t, filepath.Join(tree, "mac-4-fifo"))

	c := NewCounter()
	done := make(chan error, 1)
	go func() { done <- c.ReadPath(tree) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ReadPath(tree): %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the walk blocked, probably on the FIFO")
	}
	s := c.Summary()
	if got, want := counts(s), (map[string]int{codes.ListenerBindFailed: 2, codes.OK: 1, codes.CtrldTimeout: 1}); !maps.Equal(got, want) {
		t.Errorf("ReadPath(tree): counts = %v, want %v", got, want)
	}
	if s.Inputs != 4 {
		t.Errorf("ReadPath(tree): Inputs = %d, want 4", s.Inputs)
	}
	if s.Unreadable != 0 {
		t.Errorf("ReadPath(tree): Unreadable = %d, want 0", s.Unreadable)
	}

	c = NewCounter()
	if err := c.ReadPath(filepath.Join(dir, "missing")); err == nil {
		t.Errorf("ReadPath(missing) = nil, want an error")
	}

	// Windows has no mode bits: chmod 0 only sets the read-only attribute.
	if runtime.GOOS != "windows" && os.Geteuid() != 0 {
		locked := filepath.Join(tree, "mac-5", "install.log")
		write("mac-5/install.log", bindLine+"\n")
		if err := os.Chmod(locked, 0); err != nil {
			t.Fatal(err)
		}
		c = NewCounter()
		if err := c.ReadPath(tree); err != nil {
			t.Fatalf("ReadPath(tree with an unreadable file): %v", err)
		}
		if got := c.Summary().Unreadable; got != 1 {
			t.Errorf("ReadPath(tree with an unreadable file): Unreadable = %d, want 1", got)
		}
	}
}

// Links inside a tree are not followed; a link named on the command line
// is, like /var on macOS.
func TestReadPathLinks(t *testing.T) {
	wine.Skip(t, wine.NoSymlinks)
	dir := wine.TempDir(t)
	tree := filepath.Join(dir, "fleet")
	if err := os.MkdirAll(filepath.Join(tree, "mac-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tree, "mac-1", "ctrld-install-result.json"), []byte(recordJSON(t, codes.OK)), 0o644); err != nil {
		t.Fatal(err)
	}
	// Outside the tree, reachable only through links.
	outside := filepath.Join(dir, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "log"), []byte(strings.Repeat(bindLine+"\n", 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "log"), filepath.Join(tree, "link-to-file")); err != nil {
		t.Skipf("cannot make a symbolic link here: %v", err)
	}
	if err := os.Symlink(outside, filepath.Join(tree, "link-to-dir")); err != nil {
		t.Fatal(err)
	}

	c := NewCounter()
	if err := c.ReadPath(tree); err != nil {
		t.Fatalf("ReadPath(tree): %v", err)
	}
	if got, want := counts(c.Summary()), (map[string]int{codes.OK: 1}); !maps.Equal(got, want) {
		t.Errorf("ReadPath(tree): counts = %v, want %v: a link inside the tree was followed", got, want)
	}

	for _, link := range []string{"link-to-dir", "link-to-file"} {
		c = NewCounter()
		if err := c.ReadPath(filepath.Join(tree, link)); err != nil {
			t.Fatalf("ReadPath(%s): %v", link, err)
		}
		if got := c.Summary().Outcomes; got != 100 {
			t.Errorf("ReadPath(%s): Outcomes = %d, want 100", link, got)
		}
	}
}

func BenchmarkSummarize(b *testing.B) {
	lines := mixedLines(b)
	const n = 100_000
	size := 0
	for i := 0; i < n; i++ {
		size += len(lines[i%len(lines)]) + 1
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		c := NewCounter()
		if err := c.Read(&lineSource{lines: lines, n: n}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSummarizeRecords is 100,000 outcome records as written, indented
// over 15 lines each: the slowest input per outcome.
func BenchmarkSummarizeRecords(b *testing.B) {
	rec := recordJSON(b, codes.ListenerBindFailed)
	lines := strings.Split(strings.TrimSuffix(rec, "\n"), "\n")
	const records = 100_000
	b.SetBytes(int64(records * len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		c := NewCounter()
		if err := c.Read(&lineSource{lines: lines, n: records * len(lines)}); err != nil {
			b.Fatal(err)
		}
		if got := c.Summary().Outcomes; got != records {
			b.Fatal(fmt.Sprint("counted ", got))
		}
	}
}

// uninstallLine is the failure line of ctrld-install uninstall, spelled out
// rather than taken from finalLines, so the table is tested, not trusted.
func uninstallLine(name string) string {
	c := codes.Must(name)
	return fmt.Sprintf("ctrld-install: uninstall failed: stage=%s code=%s (exit %d)", c.Stage, c.Name, c.Exit)
}

// Which final lines are outcomes: install's and uninstall's are, verify's
// are not, and neither are retries.
func TestSummarizeCommands(t *testing.T) {
	t.Parallel()
	pin := codes.Must(codes.DeactivationPinRequired)
	notRunning := codes.Must(codes.ServiceNotRunning)
	withAction := func(name, action string) string {
		s := record.FromOutcome(decide.Installer(outcome.Install, name), "0.1.0")
		s.Action = action
		b, err := json.Marshal(record.New(s, time.Date(2026, 8, 18, 12, 0, 0, 0, time.UTC)))
		if err != nil {
			t.Fatalf("json.Marshal(record of %s, action %q): %v", name, action, err)
		}
		return string(b) + "\n"
	}
	for _, tc := range []struct {
		name  string
		input string
		want  map[string]int
	}{
		{"uninstall failure", uninstallLine(codes.DeactivationPinRequired) + "\n", map[string]int{pin.Name: 1}},
		{"uninstall failure in a --log file", "2026-11-29T10:14:03Z " + uninstallLine(codes.InstallerNotRoot) + "\n", map[string]int{codes.InstallerNotRoot: 1}},
		{"uninstall success", "ctrld-install: uninstall succeeded (exit 0)\n", map[string]int{states.Uninstalled: 1}},
		{"nothing to uninstall", "ctrld-install: not installed, nothing to do (exit 0)\n", map[string]int{states.Uninstalled: 1}},
		{"uninstall failure that disagrees", "ctrld-install: uninstall failed: stage=bootstrap code=DEACTIVATION_PIN_REQUIRED (exit 126)\n", nil},
		{"uninstall success needs the prefix", "uninstall succeeded (exit 0)\nnot installed, nothing to do (exit 0)\n", nil},
		{"verify failure", fmt.Sprintf("ctrld-install: verify failed: stage=%s code=%s (exit %d)\n", notRunning.Stage, notRunning.Name, notRunning.Exit), nil},
		{"verify success", "ctrld-install: verify succeeded (exit 0)\n", nil},
		{"verify finds nothing installed", "ctrld-install: not installed (exit 54)\n", nil},
		{"retry of an uninstall", "ctrld-install: attempt 1 failed: stage=installer code=CTRLD_TIMEOUT (exit 64); retrying in 10s\n", nil},
		{"record of an uninstall", withAction(codes.OK, "uninstalled"), map[string]int{states.Uninstalled: 1}},
		{"record of a repair", withAction(codes.OK, "repaired"), map[string]int{codes.OK: 1}},
		{"record of a failed uninstall", withAction(codes.DeactivationPinRequired, "uninstalled"), map[string]int{pin.Name: 1}},
		{"record of an upgrade", withAction(codes.OK, "upgraded"), map[string]int{codes.OK: 1}},
		{"record of a skip", withAction(codes.OK, "skipped"), map[string]int{codes.OK: 1}},
		{"record without an action (a usage error)", withAction(codes.InstallerUsage, ""), map[string]int{codes.InstallerUsage: 1}},
		{"JSON of a check is not an outcome", withAction(notRunning.Name, "verified"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := tc.want
			if want == nil {
				want = map[string]int{}
			}
			if got := counts(count(t, tc.input)); !maps.Equal(got, want) {
				t.Errorf("counts = %v, want %v", got, want)
			}
		})
	}
}

// The lines of commands that are not outcomes, as the table lists them,
// are not counted either, and every listed success line is.
func TestSummarizeFinalLinesTable(t *testing.T) {
	t.Parallel()
	for _, f := range finalLines {
		for _, s := range f.success {
			want := map[string]int{}
			if f.outcome {
				want[f.successKey.name()] = 1
			}
			if got := counts(count(t, s+"\n")); !maps.Equal(got, want) {
				t.Errorf("%q: counts = %v, want %v", s, got, want)
			}
			if !strings.Contains(s, "(exit 0)") {
				t.Errorf("%q has no %q: success lines end like failure lines, so one grep finds both", s, "(exit 0)")
			}
		}
		for _, s := range f.others {
			if got := counts(count(t, s+"\n")); len(got) != 0 {
				t.Errorf("%q: counts = %v, want none", s, got)
			}
		}
		for _, c := range codes.All() {
			if c.IsOK() {
				continue // success has no failure line
			}
			line := report.Prefix + codes.FailureLine(f.verb, c) + "\n"
			if f.outcome {
				if got, want := counts(count(t, line)), (map[string]int{c.Name: 1}); !maps.Equal(got, want) {
					t.Errorf("%q: counts = %v, want %v", line, got, want)
				}
			} else if got := counts(count(t, line)); len(got) != 0 {
				t.Errorf("%q: counts = %v, want none", line, got)
			}
		}
	}
}

func latest(t *testing.T, inputs ...string) fleetreport.Summary {
	t.Helper()
	c := NewLatestCounter()
	for _, in := range inputs {
		if err := c.Read(strings.NewReader(in)); err != nil {
			t.Fatalf("Read: %v", err)
		}
	}
	return c.Summary()
}

// runLog is the --log file of one ctrld-install run that ends in name,
// with the retry and next-step lines a real run writes around it.
func runLog(name string, run int) string {
	c := codes.Must(name)
	start := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC).Add(time.Duration(run) * 15 * time.Minute)
	at := func(d time.Duration) string { return start.Add(d).Format(time.RFC3339) + " " }
	if c.IsOK() {
		return at(0) + "ctrld-install: running ctrld start (ctrld 1.5.0, attempt 1 of 3, time left 5m0s)\n" +
			at(2*time.Second) + successLine + "\n"
	}
	return at(0) + "ctrld-install: running ctrld start (ctrld 1.5.0, attempt 1 of 3, time left 5m0s)\n" +
		at(time.Second) + "ctrld-install: attempt 1 failed: stage=bootstrap code=API_UNREACHABLE (exit 31); retrying in 10s\n" +
		at(12*time.Second) + report.Prefix + codes.FailureLine(codes.VerbProvisioning, c) + "\n" +
		at(12*time.Second) + "ctrld-install: next step: " + c.NextStep + "\n"
}

// runLogs is the log of n runs that each end in name, from the run-th on.
func runLogs(name string, run, n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(runLog(name, run+i))
	}
	return b.String()
}

// Ten devices that failed a few times and then succeeded, and one that a
// Kandji-style schedule re-ran 96 times in a day with a rejected token:
// eleven devices, one failing.
func TestSummarizeLatest(t *testing.T) {
	t.Parallel()
	var inputs []string
	for i := range 10 {
		inputs = append(inputs, runLogs(codes.APIRejected, 0, i%4)+runLog(codes.OK, i%4))
	}
	inputs = append(inputs, runLogs(codes.APIRejected, 0, 96))

	s := latest(t, inputs...)
	if s.Outcomes != 11 {
		t.Errorf("latest: Outcomes = %d, want 11", s.Outcomes)
	}
	if s.Inputs != 11 {
		t.Errorf("latest: Inputs = %d, want 11", s.Inputs)
	}
	if got, want := counts(s), (map[string]int{codes.OK: 10, codes.APIRejected: 1}); !maps.Equal(got, want) {
		t.Errorf("latest: counts = %v, want %v", got, want)
	}
	if !s.Latest {
		t.Errorf("NewLatestCounter: Summary().Latest = false, want true")
	}

	// Without --latest every run counts.
	all := NewCounter()
	for _, in := range inputs {
		if err := all.Read(strings.NewReader(in)); err != nil {
			t.Fatalf("Read: %v", err)
		}
	}
	if got, want := all.Summary().Outcomes, 10+(0+1+2+3+0+1+2+3+0+1)+96; got != want {
		t.Errorf("without --latest: Outcomes = %d, want %d", got, want)
	}
	if all.Summary().Latest {
		t.Errorf("NewCounter: Summary().Latest = true, want false")
	}
}

func TestSummarizeLatestPerInput(t *testing.T) {
	t.Parallel()
	bind := codes.ListenerBindFailed
	for _, tc := range []struct {
		name    string
		input   string
		want    map[string]int
		running int
	}{
		{"nothing", "noise\n", map[string]int{"(empty)": 1}, 0},
		{"failure after success", successLine + "\n" + bindLine + "\n", map[string]int{bind: 1}, 0},
		{"success after failure", bindLine + "\n" + successLine + "\n", map[string]int{codes.OK: 1}, 0},
		{"uninstall after install", successLine + "\n" + uninstallLine(codes.DeactivationPinRequired) + "\n", map[string]int{codes.DeactivationPinRequired: 1}, 0},
		{"verify after a failure is not an outcome", bindLine + "\nctrld-install: verify succeeded (exit 0)\n", map[string]int{bind: 1}, 0},
		{"retry after the outcome is not one", timeoutLine + "\nctrld-install: attempt 1 failed: stage=bootstrap code=API_UNREACHABLE (exit 31); retrying in 10s\n", map[string]int{codes.CtrldTimeout: 1}, 0},
		{"order within a line", "<result>OK</result> " + bindLine + " " + timeoutLine + " <result>OK</result> " + timeoutLine + "\n", map[string]int{codes.CtrldTimeout: 1}, 0},
		{"success before a failure in one line", bindLine + " " + successLine + "\n", map[string]int{codes.OK: 1}, 0},
		{"record after a line", bindLine + "\n" + recordJSON(t, codes.OK), map[string]int{codes.OK: 1}, 0},
		{"line after a record", recordJSON(t, codes.OK) + bindLine + "\n", map[string]int{bind: 1}, 0},
		{"last of an array", "[" + summaryJSON(t, codes.OK) + "," + summaryJSON(t, bind) + "]\n", map[string]int{bind: 1}, 0},
		{"region without a record keeps the line's outcome", recordJSON(t, codes.OK) + `{"msg":"` + bindLine + `"}` + "\n", map[string]int{bind: 1}, 0},
		{"a run in progress last", recordJSON(t, bind) + runningJSON(t, 12, 30), map[string]int{states.Running: 1}, 1},
		{"a run in progress, then its outcome", runningJSON(t, 11, 59) + recordJSON(t, bind), map[string]int{bind: 1}, 0},
		{"last by place, not by date", runningJSON(t, 12, 30) + recordJSON(t, bind), map[string]int{bind: 1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			want := tc.want
			if want == nil {
				want = map[string]int{}
			}
			s := latest(t, tc.input)
			if got := counts(s); !maps.Equal(got, want) {
				t.Errorf("counts = %v, want %v", got, want)
			}
			if s.Running != tc.running {
				t.Errorf("Running = %d, want %d", s.Running, tc.running)
			}
			if s.Inputs != 1 {
				t.Errorf("Inputs = %d, want 1", s.Inputs)
			}
		})
	}
}

// runningJSON is the journal entry of a run in progress at h:m on the day
// recordJSON's records are written (12:00).
func runningJSON(t testing.TB, h, m int) string {
	b, err := json.MarshalIndent(record.Running(record.CommandInstall, record.PhaseCtrldRunning, 4242, "0.1.0", nil, "", time.Date(2026, 8, 18, h, m, 0, 0, time.UTC)), "", "  ")
	if err != nil {
		t.Fatalf("json.MarshalIndent(running record): %v", err)
	}
	return string(b) + "\n"
}

// An input that breaks off has an unknown last outcome: it is reported as
// unreadable and counts nothing, rather than an earlier run's outcome.
func TestSummarizeLatestUnreadable(t *testing.T) {
	t.Parallel()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	fmt.Fprintln(zw, bindLine)
	for i := range 2000 {
		fmt.Fprintf(zw, "noise %d %s\n", i, canary)
	}
	fmt.Fprintln(zw, successLine)
	zw.Close()
	c := NewLatestCounter()
	if err := c.Read(bytes.NewReader(gz.Bytes()[:gz.Len()/2])); err == nil {
		t.Errorf("Read(half a gzip stream) = nil, want an error")
	}
	if err := c.Read(strings.NewReader(timeoutLine + "\n")); err != nil {
		t.Fatalf("Read(timeout line): %v", err)
	}
	s := c.Summary()
	if got, want := counts(s), (map[string]int{codes.CtrldTimeout: 1, "(empty)": 1}); !maps.Equal(got, want) {
		t.Errorf("counts = %v, want %v: the device of the broken input has no outcome", got, want)
	}
	if s.Inputs != 2 {
		t.Errorf("Inputs = %d, want 2", s.Inputs)
	}
	if s.Unreadable != 1 {
		t.Errorf("Unreadable = %d, want 1", s.Unreadable)
	}
}

func TestSummarizeLatestFormats(t *testing.T) {
	t.Parallel()
	s := latest(t, bindLine+"\n"+successLine+"\n", bindLine+"\n", runningJSON(t, 12, 0))
	var b bytes.Buffer
	if err := fleetreport.Write(&b, s, "text"); err != nil {
		t.Fatalf("fleetreport.Write(text): %v", err)
	}
	if want := "3 devices from 3 inputs, the last outcome of each\n"; !strings.HasPrefix(b.String(), want) {
		t.Errorf("fleetreport.Write(text) wrote:\n%s\nwant it to start with %q", b.String(), want)
	}
	if want := "\n    1   33.3%  RUNNING (state)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("fleetreport.Write(text) wrote:\n%s\nwant it to contain %q", b.String(), want)
	}

	b.Reset()
	if err := fleetreport.Write(&b, s, "markdown"); err != nil {
		t.Fatalf("fleetreport.Write(markdown): %v", err)
	}
	if want := "**3 devices** from 3 inputs, the last outcome of each.\n"; !strings.HasPrefix(b.String(), want) {
		t.Errorf("fleetreport.Write(markdown) wrote:\n%s\nwant it to start with %q", b.String(), want)
	}

	b.Reset()
	if err := fleetreport.Write(&b, s, "json"); err != nil {
		t.Fatalf("fleetreport.Write(json): %v", err)
	}
	var j struct {
		Outcomes int  `json:"outcomes"`
		Latest   bool `json:"latest"`
		Running  int  `json:"running"`
	}
	if err := json.Unmarshal(b.Bytes(), &j); err != nil {
		t.Fatalf("fleetreport.Write(json) output does not parse: %v", err)
	}
	if j.Outcomes != 3 {
		t.Errorf("fleetreport.Write(json): outcomes = %d, want 3", j.Outcomes)
	}
	if !j.Latest {
		t.Errorf("fleetreport.Write(json): latest = false, want true")
	}
	if j.Running != 1 {
		t.Errorf("fleetreport.Write(json): running = %d, want 1", j.Running)
	}

	b.Reset()
	if err := fleetreport.Write(&b, count(t, bindLine+"\n"), "json"); err != nil {
		t.Fatalf("fleetreport.Write(json): %v", err)
	}
	if want := `"latest": false`; !strings.Contains(b.String(), want) {
		t.Errorf("fleetreport.Write(json) of a NewCounter wrote:\n%s\nwant it to contain %s", b.String(), want)
	}
}
