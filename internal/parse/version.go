package parse

import (
	"bufio"
	"io"
	"strings"
)

// maxVersionOutput bounds what is read of `ctrld --version`; the real output
// is one short line.
const maxVersionOutput = 4 << 10

// cutCommitSuffix removes the 7-hex commit ctrld v1.1.4-v1.4.1 appended to
// its tag (v1.3.11-1a2b3c4). Semver would read it as a pre-release, which
// would sort the build before v1.3.11 itself.
func cutCommitSuffix(raw string) string {
	tag, commit, ok := strings.Cut(raw, "-")
	if !ok || len(commit) != 7 || strings.Count(tag, ".") != 2 {
		return raw
	}
	for i := 0; i < len(commit); i++ {
		if c := commit[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return raw
		}
	}
	for _, part := range strings.Split(strings.TrimPrefix(tag, "v"), ".") {
		if part == "" || strings.Trim(part, "0123456789") != "" {
			return raw
		}
	}
	return tag
}

// CtrldVersion parses the output of `ctrld --version` ("ctrld version
// v1.5.0"). It returns nil with no error for builds that carry no version
// (dev-2926c76, dev-none), and an error when the output is not a ctrld
// version line. The returned version carries no input text beyond what
// semver parsed.
func CtrldVersion(r io.Reader) (*Version, error) {
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
func ParseCtrldVersion(raw string) (*Version, error) {
	if strings.HasPrefix(raw, "dev-") || raw == "dev" {
		return nil, nil
	}
	raw = cutCommitSuffix(raw)
	v, err := ParseVersion(strings.TrimPrefix(raw, "v"))
	if err != nil {
		return nil, errNotVersionOutput
	}
	return v, nil
}

type parseError string

func (e parseError) Error() string { return string(e) }

// The error text is fixed so that no input byte can travel in it.
const errNotVersionOutput = parseError("output is not a ctrld version")

// DisplayVersion renders a parsed ctrld version for the surfaces: major,
// minor and patch, and a pre-release only when it is a conventional label
// (alpha, beta, rc, dev or pre, with an optional number). Build metadata and
// any other pre-release text are dropped: they come from a string ctrld
// printed, and ctrld-install writes nothing it read beyond what it needs.
func DisplayVersion(v *Version) string {
	base := (&Version{major: v.major, minor: v.minor, patch: v.patch}).String()
	pre := v.Prerelease()
	if pre == "" {
		return base
	}
	if conventionalPrerelease(pre) {
		return base + "-" + pre
	}
	return base + "-prerelease"
}

// IsDisplayVersion reports whether s is something DisplayVersion returns.
func IsDisplayVersion(s string) bool {
	v, err := ParseVersion(s)
	return err == nil && DisplayVersion(v) == s
}

func conventionalPrerelease(pre string) bool {
	for _, label := range []string{"alpha", "beta", "rc", "dev", "pre", "prerelease"} {
		rest, ok := strings.CutPrefix(pre, label)
		if !ok {
			continue
		}
		rest = strings.TrimPrefix(rest, ".")
		if len(rest) > 4 {
			return false
		}
		for i := 0; i < len(rest); i++ {
			if rest[i] < '0' || rest[i] > '9' {
				return false
			}
		}
		return true
	}
	return false
}
