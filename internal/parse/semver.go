package parse

import (
	"strconv"
	"strings"
)

// Version is a Semantic Versioning 2.0.0 version. ctrld-install parses
// versions itself rather than with github.com/Masterminds/semver/v3: that
// package compiles six regular expressions when the program starts, which
// cost about 130 page faults and 2 ms on every start, and ctrld-install
// starts twice a run (itself and its watcher) for the few lines below. The
// tests check both agree on every input they share (FuzzVersion).
type Version struct {
	major, minor, patch uint64
	pre, meta           string
}

// maxVersionLen bounds what is parsed; no real version comes near it.
const maxVersionLen = 128

// The error text is fixed so that no input byte can travel in it.
const errNotSemver = parseError("not a semantic version")

// ParseVersion parses a version as SemVer 2.0.0 writes it:
// MAJOR.MINOR.PATCH, no leading zeros, an optional pre-release and build
// metadata, no leading "v".
func ParseVersion(s string) (*Version, error) {
	if s == "" || len(s) > maxVersionLen {
		return nil, errNotSemver
	}
	core, meta, hasMeta := strings.Cut(s, "+")
	if hasMeta && !validIdentifiers(meta, false) {
		return nil, errNotSemver
	}
	core, pre, hasPre := strings.Cut(core, "-")
	if hasPre && !validIdentifiers(pre, true) {
		return nil, errNotSemver
	}
	var nums [3]uint64
	for i := range nums {
		part, rest, more := strings.Cut(core, ".")
		if more != (i < 2) {
			return nil, errNotSemver
		}
		n, ok := number(part)
		if !ok {
			return nil, errNotSemver
		}
		nums[i], core = n, rest
	}
	return &Version{major: nums[0], minor: nums[1], patch: nums[2], pre: pre, meta: meta}, nil
}

// ParseVersionLoose parses what a person types as a version: ParseVersion's
// form, with an optional leading "v", and MINOR and PATCH optional (1.5 is
// 1.5.0).
func ParseVersionLoose(s string) (*Version, error) {
	s = strings.TrimPrefix(s, "v")
	core, tail := s, ""
	if i := strings.IndexAny(s, "-+"); i >= 0 {
		core, tail = s[:i], s[i:]
	}
	switch strings.Count(core, ".") {
	case 0:
		core += ".0.0"
	case 1:
		core += ".0"
	}
	return ParseVersion(core + tail)
}

// MustParseVersion is ParseVersionLoose for versions written in the source.
func MustParseVersion(s string) *Version {
	v, err := ParseVersionLoose(s)
	if err != nil {
		panic("parse: bad version literal " + strconv.Quote(s))
	}
	return v
}

// number parses a numeric part: digits only, no leading zero.
func number(s string) (uint64, bool) {
	if s == "" || len(s) > 1 && s[0] == '0' || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// validIdentifiers checks dot-separated identifiers of [0-9A-Za-z-], none
// empty; in a pre-release a numeric one has no leading zero.
func validIdentifiers(s string, pre bool) bool {
	for id := range strings.SplitSeq(s, ".") {
		if id == "" {
			return false
		}
		numeric := true
		for i := 0; i < len(id); i++ {
			c := id[i]
			switch {
			case c >= '0' && c <= '9':
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '-':
				numeric = false
			default:
				return false
			}
		}
		if pre && numeric && len(id) > 1 && id[0] == '0' {
			return false
		}
	}
	return true
}

func (v *Version) Major() uint64 { return v.major }
func (v *Version) Minor() uint64 { return v.minor }
func (v *Version) Patch() uint64 { return v.patch }

// Prerelease is the part after "-", without it; "" for none.
func (v *Version) Prerelease() string { return v.pre }

// Metadata is the build metadata after "+", without it; "" for none.
func (v *Version) Metadata() string { return v.meta }

// String writes the version in ParseVersion's form.
func (v *Version) String() string {
	s := strconv.FormatUint(v.major, 10) + "." + strconv.FormatUint(v.minor, 10) + "." + strconv.FormatUint(v.patch, 10)
	if v.pre != "" {
		s += "-" + v.pre
	}
	if v.meta != "" {
		s += "+" + v.meta
	}
	return s
}

// Compare orders versions by SemVer precedence: -1, 0 or +1. Build metadata
// plays no part.
func (v *Version) Compare(o *Version) int {
	for _, d := range [...][2]uint64{{v.major, o.major}, {v.minor, o.minor}, {v.patch, o.patch}} {
		if d[0] != d[1] {
			if d[0] < d[1] {
				return -1
			}
			return 1
		}
	}
	switch {
	case v.pre == o.pre:
		return 0
	case v.pre == "":
		return 1 // a release follows its pre-releases
	case o.pre == "":
		return -1
	}
	a, b := strings.Split(v.pre, "."), strings.Split(o.pre, ".")
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := compareIdentifier(a[i], b[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// compareIdentifier orders two pre-release identifiers: numbers by value
// and before any alphanumeric one, which compare in ASCII order.
func compareIdentifier(a, b string) int {
	an, aNum := numericIdentifier(a)
	bn, bNum := numericIdentifier(b)
	switch {
	case aNum && bNum:
		if an == bn {
			return 0
		}
		if an < bn {
			return -1
		}
		return 1
	case aNum:
		return -1
	case bNum:
		return 1
	}
	return strings.Compare(a, b)
}

func numericIdentifier(s string) (uint64, bool) {
	if strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

func (v *Version) LessThan(o *Version) bool    { return v.Compare(o) < 0 }
func (v *Version) GreaterThan(o *Version) bool { return v.Compare(o) > 0 }
func (v *Version) Equal(o *Version) bool       { return v.Compare(o) == 0 }
