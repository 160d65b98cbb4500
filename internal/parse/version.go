package parse

import (
	"bufio"
	"io"
	"regexp"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// maxVersionOutput bounds what is read of `ctrld --version`; the real output
// is one short line.
const maxVersionOutput = 4 << 10

// commitSuffix is the 7-hex commit ctrld v1.1.4-v1.4.1 appended to its tag.
// Semver would read it as a pre-release, which would sort v1.3.11-1a2b3c4
// before v1.3.11.
var commitSuffix = regexp.MustCompile(`^(v?[0-9]+\.[0-9]+\.[0-9]+)-[0-9a-f]{7}$`)

// CtrldVersion parses the output of `ctrld --version` ("ctrld version
// v1.5.0"). It returns nil with no error for builds that carry no version
// (dev-2926c76, dev-none), and an error when the output is not a ctrld
// version line. The returned version carries no input text beyond what
// semver parsed.
func CtrldVersion(r io.Reader) (*semver.Version, error) {
	sc := bufio.NewScanner(io.LimitReader(r, maxVersionOutput))
	for sc.Scan() {
		line := strings.TrimSpace(string(TrimLineEnd(StripANSI(sc.Bytes()))))
		raw, ok := strings.CutPrefix(line, "ctrld version ")
		if !ok || strings.ContainsAny(raw, " \t") || raw == "" {
			continue
		}
		return ParseCtrldVersion(raw)
	}
	return nil, errNotVersionOutput
}

// ParseCtrldVersion parses the version word of `ctrld --version`.
func ParseCtrldVersion(raw string) (*semver.Version, error) {
	if strings.HasPrefix(raw, "dev-") || raw == "dev" {
		return nil, nil
	}
	if m := commitSuffix.FindStringSubmatch(raw); m != nil {
		raw = m[1]
	}
	v, err := semver.StrictNewVersion(strings.TrimPrefix(raw, "v"))
	if err != nil {
		return nil, errNotVersionOutput
	}
	return v, nil
}

type parseError string

func (e parseError) Error() string { return string(e) }

// The error text is fixed so that no input byte can travel in it.
const errNotVersionOutput = parseError("output is not a ctrld version")
