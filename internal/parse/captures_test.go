package parse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

var capturesDir = filepath.Join("testdata", "captures")

// captureEntry is one entry of testdata/captures/index.json; its README
// describes the fields.
type captureEntry struct {
	File               string   `json:"file"`
	VersionLine        string   `json:"version_line"`
	Mode               string   `json:"mode"`
	Extra              []string `json:"extra"`
	Unprivileged       bool     `json:"unprivileged"`
	Port53Bound        bool     `json:"port53_bound"`
	Exit               int      `json:"exit"`
	Legacy             string   `json:"legacy"`
	UnknownFlag        string   `json:"unknown_flag"`
	Code               string   `json:"code"`
	ServiceLogCode     string   `json:"service_log_code"`
	CodeWithServiceLog string   `json:"code_with_service_log"`
}

// capture is a capture file taken apart: ctrld's output, the exit status of
// its trailer and, when appended, the daemon's log.
type capture struct {
	captureEntry
	version    *Version
	output     []byte
	serviceLog []byte
	exit       int
}

var captureName = regexp.MustCompile(`^ctrld-(\d+\.\d+\.\d+)-[a-z0-9-]+\.txt$`)

func loadCaptures(t testing.TB) []capture {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(capturesDir, "index.json"))
	require.NoError(t, err)
	var index struct {
		About    string         `json:"about"`
		Captures []captureEntry `json:"captures"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&index), "index.json")

	files, err := filepath.Glob(filepath.Join(capturesDir, "ctrld-*.txt"))
	require.NoError(t, err)
	require.Len(t, index.Captures, len(files), "every capture needs an entry in index.json")

	out := make([]capture, 0, len(index.Captures))
	for _, e := range index.Captures {
		m := captureName.FindStringSubmatch(e.File)
		require.NotNil(t, m, "capture name %q", e.File)
		data, err := os.ReadFile(filepath.Join(capturesDir, e.File))
		require.NoError(t, err, e.File)
		c := capture{captureEntry: e, version: MustParseVersion(m[1]), exit: -1}
		c.output, c.serviceLog, c.exit = splitCapture(t, data)
		out = append(out, c)
	}
	return out
}

var trailerExit = regexp.MustCompile(`^### (?:start )?exit=(\d+)`)

// splitCapture applies the README's rule: ctrld's output is everything
// before the first "### " line; the daemon's log, when appended, is the
// section after "### /var/log/ctrld.log:".
func splitCapture(t testing.TB, data []byte) (output, serviceLog []byte, exit int) {
	t.Helper()
	exit = -1
	lines := bytes.SplitAfter(data, []byte("\n"))
	section := "output"
	for _, l := range lines {
		if bytes.HasPrefix(l, []byte("### ")) {
			if m := trailerExit.FindSubmatch(l); m != nil && exit < 0 {
				exit, _ = strconv.Atoi(string(m[1]))
			}
			switch {
			case bytes.HasPrefix(l, []byte("### /var/log/ctrld.log:")):
				section = "log"
			default:
				section = "trailer"
			}
			continue
		}
		switch section {
		case "output":
			output = append(output, l...)
		case "log":
			serviceLog = append(serviceLog, l...)
		}
	}
	require.GreaterOrEqual(t, exit, 0, "no exit status in the trailer")
	return output, serviceLog, exit
}

// withCanaries puts secrets where the captures have placeholders, as the
// real output had them.
func withCanaries(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte("<TOKEN>"), []byte(canaryToken))
	return bytes.ReplaceAll(b, []byte("<RESOLVER>"), []byte(canaryResolver))
}

func outputLines(b []byte) [][]byte {
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

// expectedCode is the decision of contract section 8 for output alone, as
// far as the classifier feeds it: its code, else unclassified for a failed
// exit.
func expectedCode(legacy string, exit int) string {
	if legacy != "" {
		return legacy
	}
	if exit != 0 {
		return codes.CtrldFailedUnclassified
	}
	return ""
}

func TestCaptures(t *testing.T) {
	for _, c := range loadCaptures(t) {
		t.Run(c.File, func(t *testing.T) {
			assert.Equal(t, c.exit, c.Exit, "exit in index.json and in the trailer")
			assert.Contains(t, []string{"token", "resolver"}, c.Mode)

			v, err := CtrldVersion(strings.NewReader(c.VersionLine + "\n"))
			require.NoError(t, err)
			require.NotNil(t, v)
			assert.Equal(t, c.version.String(), DisplayVersion(v), "version line and file name")

			// The secret the output echoes is the one the mode passes.
			if bytes.Contains(c.output, []byte("<TOKEN>")) {
				assert.Equal(t, "token", c.Mode)
			}
			if bytes.Contains(c.output, []byte("<RESOLVER>")) {
				assert.Equal(t, "resolver", c.Mode)
			}

			cl := NewClassifier()
			cl.SetOwnFlags(FeatureCdOrg, FeatureCd)
			for _, line := range outputLines(withCanaries(c.output)) {
				cl.Line(line)
			}
			assert.Equal(t, c.Legacy, resultName(t, cl), "Result")
			found, own := cl.UnknownFlag()
			switch c.UnknownFlag {
			case "":
				assert.False(t, found, "unknown flag")
			case "own", "other":
				assert.True(t, found, "unknown flag")
				assert.Equal(t, c.UnknownFlag == "own", own, "own flag")
			default:
				t.Errorf("unknown_flag %q", c.UnknownFlag)
			}
			assert.Equal(t, expectedCode(c.Legacy, c.Exit), c.Code, "code")
			_, known := codes.Lookup(c.Code)
			assert.True(t, known, "code %q", c.Code)
			if c.Code != "" {
				assert.True(t, cl.Terminal(), "a failed run shows a terminal failure")
			}

			assert.NotContains(t, fmt.Sprintf("%+v", cl), "CANARY")
			assertScratchZero(t, cl)

			if len(c.serviceLog) == 0 {
				assert.Empty(t, c.ServiceLogCode)
				assert.Empty(t, c.CodeWithServiceLog)
				return
			}
			got, ok := ClassifyServiceLog(bytes.NewReader(withCanaries(c.serviceLog)))
			name := ""
			if ok {
				name = got.Name
			}
			assert.Equal(t, c.ServiceLogCode, name, "service log")
			want := c.Code
			if c.ServiceLogCode != "" {
				want = c.ServiceLogCode
			}
			assert.Equal(t, want, c.CodeWithServiceLog, "code with the service log")
		})
	}
}

// What the captures show about flags must agree with the feature table.
func TestCapturesAgreeWithFeatures(t *testing.T) {
	checked := map[string]int{}
	for _, c := range loadCaptures(t) {
		out := string(StripANSI(c.output))
		for _, f := range []string{FeatureCd, FeatureCdOrg} {
			var has, lacks bool
			switch {
			case strings.Contains(out, "unknown flag: "+f+"\n"):
				lacks = true
			case regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(f) + ` string`).MatchString(out):
				has = true // the usage text lists it
			case f == FeatureCdOrg && strings.Contains(out, "provision token: <TOKEN>"),
				f == FeatureCd && strings.Contains(out, "<RESOLVER>"):
				has = true // ctrld acted on it
			default:
				continue
			}
			checked[f]++
			assert.Equal(t, has, FlagSupported(c.version, f), "%s: %s", c.File, f)
			fe, ok := lookupFeature(f)
			require.True(t, ok)
			if lacks {
				require.NotNil(t, fe.lastWithout, f)
				assert.False(t, c.version.GreaterThan(fe.lastWithout), "%s lacks %s after the table's last version without it", c.File, f)
			} else {
				assert.False(t, c.version.LessThan(fe.since), "%s has %s before the table's first version with it", c.File, f)
			}
		}
	}
	assert.Greater(t, checked[FeatureCd], 10)
	assert.Greater(t, checked[FeatureCdOrg], 10)
}
