package bench

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	capturedDir = "../internal/parse/testdata/legacy"
	catalogue   = "../internal/parse/legacy_catalogue.go"
)

func captured(t testing.TB) [][]byte {
	t.Helper()
	lines, err := CapturedLines(capturedDir)
	require.NoError(t, err)
	require.NotEmpty(t, lines)
	return lines
}

func genLog(t testing.TB, size int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := WriteLog(&buf, size, captured(t))
	require.NoError(t, err)
	require.Equal(t, int64(buf.Len()), n)
	return buf.Bytes()
}

// The figures of two runs, or two machines, are only comparable when they
// scanned the same bytes.
func TestWriteLogIsDeterministic(t *testing.T) {
	a, b := genLog(t, 1<<20), genLog(t, 1<<20)
	assert.Equal(t, a, b)
	assert.GreaterOrEqual(t, len(a), 1<<20)
	assert.Less(t, len(a), 1<<20+4<<10, "it stops at the first line end past the size")
	assert.True(t, bytes.HasSuffix(a, []byte("\n")))
}

// The log must look like ctrld's: coloured and plain 1.x lines, replayed
// daemon lines, 2.x lines, and the captured outputs mixed in.
func TestWriteLogLooksLikeCtrld(t *testing.T) {
	log := genLog(t, 1<<20)
	for _, want := range []string{"\x1b[90mMar  4 ", " DBG [", " ??? ", "\tINFO\t", "listener.0 could not find available listen ip and port"} {
		assert.Contains(t, string(log), want)
	}
	lines := bytes.Count(log, []byte("\n"))
	found := 0
	for _, l := range captured(t) {
		if bytes.Contains(log, l) {
			found++
		}
	}
	assert.Equal(t, len(captured(t)), found, "every captured line appears in a 1 MiB log")
	assert.Greater(t, lines, 5000)
}

// A decisive line would make the classifier skip the rest of the log, and
// the figure would measure nothing.
func TestCapturedLinesLeaveOutDecisiveLines(t *testing.T) {
	for _, l := range captured(t) {
		assert.False(t, decisive(l), "%q", l)
	}
	all := 0
	names, _ := filepath.Glob(filepath.Join(capturedDir, "*.log"))
	for _, n := range names {
		b, err := os.ReadFile(n)
		require.NoError(t, err)
		all += bytes.Count(bytes.TrimRight(b, "\n"), []byte("\n")) + 1
	}
	assert.Less(t, len(captured(t)), all, "the not-root and PIN lines are left out")
}

func TestScanUnderstandsTheLog(t *testing.T) {
	s := NewScan()
	for _, l := range bytes.Split(genLog(t, 256<<10), []byte("\n")) {
		s.Line(l)
	}
	assert.NotEmpty(t, s.Code())
	assert.Greater(t, s.Lines, int64(1000))
}

func TestScanPrefersTheIdentifierLine(t *testing.T) {
	s := NewScan()
	s.Line([]byte("Mar  4 20:56:16.900 FTL listener.0 could not find available listen ip and port"))
	s.Line([]byte("provisioning failed: stage=service code=SERVICE_START_FAILED (exit 52)"))
	assert.Equal(t, "SERVICE_START_FAILED", s.Code())
}

func TestCataloguePrefixes(t *testing.T) {
	p, err := CataloguePrefixes(catalogue)
	require.NoError(t, err)
	assert.Greater(t, len(p), 30)
	assert.Contains(t, p, "listener.")
	assert.Contains(t, p, "failed to fetch resolver uid with provision token")
	for _, s := range p {
		assert.Equal(t, strings.ToLower(s), s, "the catalogue keeps prefixes in lower case")
	}
}

// grep must accept the patterns and match the lines the classifier acts on.
func TestGrepPatterns(t *testing.T) {
	p, err := CataloguePrefixes(catalogue)
	require.NoError(t, err)
	pats := GrepPatterns(p)
	for _, s := range pats {
		_, err := regexp.Compile(s)
		assert.NoError(t, err, s)
	}
	grep, err := exec.LookPath("grep")
	if err != nil || runtime.GOOS == "windows" {
		t.Skip("no grep here")
	}
	dir := t.TempDir()
	pf := filepath.Join(dir, "patterns")
	require.NoError(t, os.WriteFile(pf, []byte(strings.Join(pats, "\n")+"\n"), 0o644))
	input := "Mar  4 20:56:16.900 FTL LISTENER.0 could not find available listen ip and port\n" +
		"provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)\n" +
		`Mar  4 20:56:16.900 FTL flag "--cd" something` + "\n" +
		"Mar  4 20:56:16.900 DBG [0a0b0c] received query: example.com. A\n"
	cmd := exec.Command(grep, "-E", "-i", "-c", "-f", pf)
	cmd.Stdin = strings.NewReader(input)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	require.NoError(t, err)
	assert.Equal(t, "3\n", string(out))
}

func TestScanThroughRunner(t *testing.T) {
	cat, err := exec.LookPath("cat")
	if err != nil || runtime.GOOS == "windows" {
		t.Skip("no cat here")
	}
	f := filepath.Join(t.TempDir(), "ctrld.log")
	log := genLog(t, 256<<10)
	require.NoError(t, os.WriteFile(f, log, 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, res, err := ScanThroughRunner(ctx, cat, f)
	require.NoError(t, err)
	assert.Equal(t, 0, res.ExitCode)
	assert.Equal(t, int64(bytes.Count(log, []byte("\n"))), s.Lines)
	assert.NotEmpty(t, s.Code())
}

func TestMedian(t *testing.T) {
	assert.Equal(t, time.Duration(0), Median(nil))
	assert.Equal(t, 2*time.Second, Median([]time.Duration{3 * time.Second, time.Second, 2 * time.Second}))
	assert.Equal(t, 2500*time.Millisecond, Median([]time.Duration{4 * time.Second, time.Second, 2 * time.Second, 3 * time.Second}))
	assert.Equal(t, 4*time.Second, Max([]time.Duration{4 * time.Second, time.Second}))
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
	require.NoError(b, os.WriteFile(f, log, 0o644))
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		s, _, err := ScanThroughRunner(context.Background(), cat, f)
		if err != nil || s.Code() == "" {
			b.Fatal("the scan failed")
		}
	}
}
