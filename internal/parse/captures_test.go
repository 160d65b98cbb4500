package parse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

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
	if err != nil {
		t.Fatal(err)
	}
	var index struct {
		About    string         `json:"about"`
		Captures []captureEntry `json:"captures"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&index); err != nil {
		t.Fatalf("index.json: %v", err)
	}

	files, err := filepath.Glob(filepath.Join(capturesDir, "ctrld-*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(index.Captures) != len(files) {
		t.Fatalf("index.json has %d entries for %d capture files: every capture needs an entry in index.json", len(index.Captures), len(files))
	}

	out := make([]capture, 0, len(index.Captures))
	for _, e := range index.Captures {
		m := captureName.FindStringSubmatch(e.File)
		if m == nil {
			t.Fatalf("capture name %q does not match %s", e.File, captureName)
		}
		data, err := os.ReadFile(filepath.Join(capturesDir, e.File))
		if err != nil {
			t.Fatal(err)
		}
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
	if exit < 0 {
		t.Fatalf("no exit status in the trailer")
	}
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
			if c.Exit != c.exit {
				t.Errorf("exit in index.json is %d, in the trailer %d", c.Exit, c.exit)
			}
			if modes := []string{"token", "resolver"}; !slices.Contains(modes, c.Mode) {
				t.Errorf("mode %q, want one of %q", c.Mode, modes)
			}

			v, err := CtrldVersion(strings.NewReader(c.VersionLine + "\n"))
			if err != nil {
				t.Fatalf("CtrldVersion(%q): %v", c.VersionLine, err)
			}
			if v == nil {
				t.Fatalf("CtrldVersion(%q) = nil", c.VersionLine)
			}
			if got, want := DisplayVersion(v), c.version.String(); got != want {
				t.Errorf("version line gives %s, file name %s", got, want)
			}

			// The secret the output echoes is the one the mode passes.
			if bytes.Contains(c.output, []byte("<TOKEN>")) && c.Mode != "token" {
				t.Errorf("the output echoes the token, but mode is %q", c.Mode)
			}
			if bytes.Contains(c.output, []byte("<RESOLVER>")) && c.Mode != "resolver" {
				t.Errorf("the output echoes the resolver, but mode is %q", c.Mode)
			}

			cl := NewClassifier()
			cl.SetOwnFlags(FeatureCdOrg, FeatureCd)
			for _, line := range outputLines(withCanaries(c.output)) {
				cl.Line(line)
			}
			if got := resultName(t, cl); got != c.Legacy {
				t.Errorf("Result() = %q, want %q", got, c.Legacy)
			}
			found, own := cl.UnknownFlag()
			switch c.UnknownFlag {
			case "":
				if found {
					t.Errorf("UnknownFlag() found = true, want false")
				}
			case "own", "other":
				if !found {
					t.Errorf("UnknownFlag() found = false, want true")
				}
				if want := c.UnknownFlag == "own"; own != want {
					t.Errorf("UnknownFlag() own = %v, want %v", own, want)
				}
			default:
				t.Errorf("unknown_flag %q", c.UnknownFlag)
			}
			if want := expectedCode(c.Legacy, c.Exit); c.Code != want {
				t.Errorf("code in index.json is %q, want %q", c.Code, want)
			}
			if _, known := codes.Lookup(c.Code); !known {
				t.Errorf("code %q is not registered", c.Code)
			}
			if c.Code != "" && !cl.Terminal() {
				t.Errorf("Terminal() = false: a failed run shows a terminal failure")
			}

			if s := fmt.Sprintf("%+v", cl); strings.Contains(s, "CANARY") {
				t.Errorf("the classifier keeps a secret: %s", s)
			}
			assertScratchZero(t, cl)

			if len(c.serviceLog) == 0 {
				if c.ServiceLogCode != "" {
					t.Errorf("service_log_code is %q, but no service log is appended", c.ServiceLogCode)
				}
				if c.CodeWithServiceLog != "" {
					t.Errorf("code_with_service_log is %q, but no service log is appended", c.CodeWithServiceLog)
				}
				return
			}
			got, ok := ClassifyServiceLog(bytes.NewReader(withCanaries(c.serviceLog)))
			name := ""
			if ok {
				name = got.Name
			}
			if name != c.ServiceLogCode {
				t.Errorf("ClassifyServiceLog(service log) = %q, want %q", name, c.ServiceLogCode)
			}
			want := c.Code
			if c.ServiceLogCode != "" {
				want = c.ServiceLogCode
			}
			if c.CodeWithServiceLog != want {
				t.Errorf("code with the service log in index.json is %q, want %q", c.CodeWithServiceLog, want)
			}
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
			if got := FlagSupported(c.version, f); got != has {
				t.Errorf("%s: FlagSupported(%s, %s) = %v, but the capture says %v", c.File, c.version, f, got, has)
			}
			fe, ok := lookupFeature(f)
			if !ok {
				t.Fatalf("lookupFeature(%s) found nothing", f)
			}
			if lacks {
				if fe.lastWithout == nil {
					t.Fatalf("%s lacks %s, but the table has no last version without it", c.File, f)
				}
				if c.version.GreaterThan(fe.lastWithout) {
					t.Errorf("%s lacks %s after the table's last version without it", c.File, f)
				}
			} else {
				if c.version.LessThan(fe.since) {
					t.Errorf("%s has %s before the table's first version with it", c.File, f)
				}
			}
		}
	}
	for _, f := range []string{FeatureCd, FeatureCdOrg} {
		if checked[f] <= 10 {
			t.Errorf("%d captures show whether ctrld has %s, want more than 10", checked[f], f)
		}
	}
}
