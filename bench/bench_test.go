package bench

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

const (
	capturedDir = "../internal/parse/testdata/legacy"
	catalogue   = "../internal/parse/legacy_catalogue.go"
)

func captured(t testing.TB) [][]byte {
	t.Helper()
	lines, err := CapturedLines(capturedDir)
	if err != nil {
		t.Fatalf("CapturedLines(%q): %v", capturedDir, err)
	}
	if len(lines) == 0 {
		t.Fatalf("CapturedLines(%q) found no lines", capturedDir)
	}
	return lines
}

func genLog(t testing.TB, size int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := WriteLog(&buf, size, captured(t))
	if err != nil {
		t.Fatalf("WriteLog(%d): %v", size, err)
	}
	if got, want := n, int64(buf.Len()); got != want {
		t.Fatalf("WriteLog(%d) = %d, but wrote %d bytes", size, got, want)
	}
	return buf.Bytes()
}

// The figures of two runs, or two machines, are only comparable when they
// scanned the same bytes.
func TestWriteLogIsDeterministic(t *testing.T) {
	a, b := genLog(t, 1<<20), genLog(t, 1<<20)
	if !bytes.Equal(a, b) {
		t.Errorf("two logs of 1 MiB differ")
	}
	if len(a) < 1<<20 {
		t.Errorf("log of 1 MiB is %d bytes, want at least %d", len(a), 1<<20)
	}
	if limit := 1<<20 + 4<<10; len(a) >= limit {
		t.Errorf("log of 1 MiB is %d bytes, want fewer than %d: it stops at the first line end past the size", len(a), limit)
	}
	if !bytes.HasSuffix(a, []byte("\n")) {
		t.Errorf("log does not end with a newline")
	}
}

// The log must look like ctrld's: coloured and plain 1.x lines, replayed
// daemon lines, 2.x lines, and the captured outputs mixed in.
func TestWriteLogLooksLikeCtrld(t *testing.T) {
	log := genLog(t, 1<<20)
	for _, want := range []string{"\x1b[90mMar  4 ", " DBG [", " ??? ", "\tINFO\t", "listener.0 could not find available listen ip and port"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("log holds no %q", want)
		}
	}
	lines := bytes.Count(log, []byte("\n"))
	found := 0
	for _, l := range captured(t) {
		if bytes.Contains(log, l) {
			found++
		}
	}
	if got, want := found, len(captured(t)); got != want {
		t.Errorf("%d of %d captured lines appear in a 1 MiB log, want every one", got, want)
	}
	if lines <= 5000 {
		t.Errorf("log of 1 MiB has %d lines, want more than 5000", lines)
	}
}

// A decisive line would make the classifier skip the rest of the log, and
// the figure would measure nothing.
func TestCapturedLinesLeaveOutDecisiveLines(t *testing.T) {
	for _, l := range captured(t) {
		if decisive(l) {
			t.Errorf("decisive(%q) = true, want false", l)
		}
	}
	all := 0
	names, _ := filepath.Glob(filepath.Join(capturedDir, "*.log"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		all += bytes.Count(bytes.TrimRight(b, "\n"), []byte("\n")) + 1
	}
	if got := len(captured(t)); got >= all {
		t.Errorf("CapturedLines returned %d of %d lines, want fewer: the not-root and PIN lines are left out", got, all)
	}
}

func TestScanUnderstandsTheLog(t *testing.T) {
	s := NewScan()
	for _, l := range bytes.Split(genLog(t, 256<<10), []byte("\n")) {
		s.Line(l)
	}
	if s.Code() == "" {
		t.Errorf("Code() is empty after the log")
	}
	if s.Lines <= 1000 {
		t.Errorf("Lines = %d, want more than 1000", s.Lines)
	}
}

func TestScanPrefersTheIdentifierLine(t *testing.T) {
	s := NewScan()
	s.Line([]byte("Mar  4 20:56:16.900 FTL listener.0 could not find available listen ip and port"))
	s.Line([]byte("provisioning failed: stage=service code=SERVICE_START_FAILED (exit 52)"))
	if got, want := s.Code(), "SERVICE_START_FAILED"; got != want {
		t.Errorf("Code() = %q, want %q", got, want)
	}
}

func TestCataloguePrefixes(t *testing.T) {
	p, err := CataloguePrefixes(catalogue)
	if err != nil {
		t.Fatalf("CataloguePrefixes(%q): %v", catalogue, err)
	}
	if len(p) <= 30 {
		t.Errorf("CataloguePrefixes(%q) returned %d prefixes, want more than 30", catalogue, len(p))
	}
	for _, want := range []string{"listener.", "failed to fetch resolver uid with provision token"} {
		if !slices.Contains(p, want) {
			t.Errorf("CataloguePrefixes(%q) holds no %q", catalogue, want)
		}
	}
	for _, s := range p {
		if strings.ToLower(s) != s {
			t.Errorf("prefix %q is not lower case: the catalogue keeps prefixes in lower case", s)
		}
	}
}

// grep must accept the patterns and match the lines the classifier acts on.
func TestGrepPatterns(t *testing.T) {
	p, err := CataloguePrefixes(catalogue)
	if err != nil {
		t.Fatalf("CataloguePrefixes(%q): %v", catalogue, err)
	}
	pats := GrepPatterns(p)
	for _, s := range pats {
		if _, err := regexp.Compile(s); err != nil {
			t.Errorf("regexp.Compile(%q): %v", s, err)
		}
	}
	grep, err := exec.LookPath("grep")
	if err != nil || runtime.GOOS == "windows" {
		t.Skip("no grep here")
	}
	dir := t.TempDir()
	pf := filepath.Join(dir, "patterns")
	if err := os.WriteFile(pf, []byte(strings.Join(pats, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	input := "Mar  4 20:56:16.900 FTL LISTENER.0 could not find available listen ip and port\n" +
		"provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)\n" +
		`Mar  4 20:56:16.900 FTL flag "--cd" something` + "\n" +
		"Mar  4 20:56:16.900 DBG [0a0b0c] received query: example.com. A\n"
	cmd := exec.Command(grep, "-E", "-i", "-c", "-f", pf)
	cmd.Stdin = strings.NewReader(input)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("grep -E -i -c -f patterns: %v", err)
	}
	if got, want := string(out), "3\n"; got != want {
		t.Errorf("grep -E -i -c -f patterns = %q, want %q", got, want)
	}
}

func TestScanThroughRunner(t *testing.T) {
	cat, err := exec.LookPath("cat")
	if err != nil || runtime.GOOS == "windows" {
		t.Skip("no cat here")
	}
	f := filepath.Join(t.TempDir(), "ctrld.log")
	log := genLog(t, 256<<10)
	if err := os.WriteFile(f, log, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, res, err := ScanThroughRunner(ctx, cat, f)
	if err != nil {
		t.Fatalf("ScanThroughRunner(cat %s): %v", f, err)
	}
	if res.ExitCode != 0 {
		t.Errorf("ScanThroughRunner(cat %s): exit code %d, want 0", f, res.ExitCode)
	}
	if got, want := s.Lines, int64(bytes.Count(log, []byte("\n"))); got != want {
		t.Errorf("ScanThroughRunner(cat %s): Lines = %d, want %d", f, got, want)
	}
	if s.Code() == "" {
		t.Errorf("ScanThroughRunner(cat %s): Code() is empty", f)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		ds   []time.Duration
		want time.Duration
	}{
		{nil, 0},
		{[]time.Duration{3 * time.Second, time.Second, 2 * time.Second}, 2 * time.Second},
		{[]time.Duration{4 * time.Second, time.Second, 2 * time.Second, 3 * time.Second}, 2500 * time.Millisecond},
	} {
		if got := Median(tc.ds); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.ds, got, tc.want)
		}
	}
	ds := []time.Duration{4 * time.Second, time.Second}
	if got, want := Max(ds), 4*time.Second; got != want {
		t.Errorf("Max(%v) = %v, want %v", ds, got, want)
	}
}

// BenchmarkScan is ctrld-install's per-line work on the realistic log, in
// memory: no pipe, no child.
func BenchmarkScan(b *testing.B) {
	log := genLog(b, 8<<20)
	lines := bytes.Split(bytes.TrimSuffix(log, []byte("\n")), []byte("\n"))
	b.SetBytes(int64(len(log)))
	b.ReportAllocs()
	for b.Loop() {
		s := NewScan()
		for _, l := range lines {
			s.Line(l)
		}
		if s.Code() == "" {
			b.Fatal("the log was not understood")
		}
	}
}

// BenchmarkScanThroughRunner adds the child, the pipe and the runner's line
// splitting, as ctrld-install runs ctrld.
func BenchmarkScanThroughRunner(b *testing.B) {
	cat, err := exec.LookPath("cat")
	if err != nil || runtime.GOOS == "windows" {
		b.Skip("no cat here")
	}
	f := filepath.Join(b.TempDir(), "ctrld.log")
	log := genLog(b, 8<<20)
	if err := os.WriteFile(f, log, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		s, _, err := ScanThroughRunner(context.Background(), cat, f)
		if err != nil || s.Code() == "" {
			b.Fatal("the scan failed")
		}
	}
}
