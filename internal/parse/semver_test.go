package parse

import (
	"strings"
	"testing"

	"github.com/Masterminds/semver/v3"
)

var versionSeeds = []string{
	"0.0.0", "1.5.0", "1.2.3-rc.1", "1.2.3-rc.1+build.5", "1.2.3+meta-x", "10.20.30",
	"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11",
	"1.0.0-rc.1", "1.0.0", "1.0.0-0A.is.legal", "1.2.3-4-gabcdef012345", "2.0.0--", "1.2.3----RC-SNAPSHOT.12.9.1--.12",
	"", "v1.2.3", "1.2", "1", "01.2.3", "1.02.3", "1.2.03", "1.2.3-01", "1.2.3-", "1.2.3+", "1.2.3-a..b",
	"1.2.3+a..b", "1.2.3-a_b", "1.2.3+a+b", "1.2.3.4", "1..3", "-1.2.3", "1.2.3 ", " 1.2.3", "1.2.3-ü",
	"18446744073709551615.0.0", "18446744073709551616.0.0", "1.2.3-18446744073709551616", "1-2.3.4",
}

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ok   bool
		want string
	}{
		{"1.5.0", true, "1.5.0"},
		{"1.2.3-rc.1+build.5", true, "1.2.3-rc.1+build.5"},
		{"1.2.3-0a", true, "1.2.3-0a"},
		{"v1.5.0", false, ""},
		{"1.5", false, ""},
		{"01.5.0", false, ""},
		{"1.2.3-01", false, ""},
		{"1.2.3+01", true, "1.2.3+01"}, // leading zeros are allowed in build metadata
		{"1.2.3-a..b", false, ""},
		{"1.2.3-a_b", false, ""},
		{"1.2.3.4", false, ""},
		{"", false, ""},
	} {
		v, err := ParseVersion(tc.in)
		if !tc.ok {
			if err == nil {
				t.Errorf("ParseVersion(%q) = %s, want an error", tc.in, v)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ParseVersion(%q): %v", tc.in, err)
		}
		if got := v.String(); got != tc.want {
			t.Errorf("ParseVersion(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestParseVersionLoose(t *testing.T) {
	for in, want := range map[string]string{"1.5": "1.5.0", "v1.5.0": "1.5.0", "2": "2.0.0", "v1.5-rc.1": "1.5.0-rc.1", "1.5+b": "1.5.0+b"} {
		v, err := ParseVersionLoose(in)
		if err != nil {
			t.Fatalf("ParseVersionLoose(%q): %v", in, err)
		}
		if got := v.String(); got != want {
			t.Errorf("ParseVersionLoose(%q) = %s, want %s", in, got, want)
		}
	}
	for _, in := range []string{"", "v", "1.", "1.5.", "x1.5", "1.05", "vv1.5.0", "1.5.0.0"} {
		if v, err := ParseVersionLoose(in); err == nil {
			t.Errorf("ParseVersionLoose(%q) = %s, want an error", in, v)
		}
	}
}

// The precedence example of SemVer 2.0.0, section 11, in order.
func TestVersionPrecedence(t *testing.T) {
	order := []string{"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
		"1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0"}
	for i := range order {
		for j := range order {
			a, b := MustParseVersion(order[i]), MustParseVersion(order[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := a.Compare(b); got != want {
				t.Errorf("%s.Compare(%s) = %d, want %d", order[i], order[j], got, want)
			}
		}
	}
	if !MustParseVersion("1.2.3+a").Equal(MustParseVersion("1.2.3+b")) {
		t.Errorf("1.2.3+a is not equal to 1.2.3+b: build metadata plays no part")
	}
	// Numeric identifiers sort before alphanumeric ones, whatever ASCII says.
	if !MustParseVersion("1.0.0-9").LessThan(MustParseVersion("1.0.0-10a")) {
		t.Errorf("1.0.0-9 is not before 1.0.0-10a: a numeric identifier sorts first")
	}
	if got := MustParseVersion("v1.6").String(); got != "1.6.0" {
		t.Errorf("MustParseVersion(v1.6) = %s, want 1.6.0: literals are read loosely", got)
	}
	defer func() {
		if recover() == nil {
			t.Errorf("MustParseVersion(1.x) did not panic")
		}
	}()
	MustParseVersion("1.x")
}

func TestParseVersionRefusesOverlongInput(t *testing.T) {
	long := "1.0.0-" + strings.Repeat("a", maxVersionLen-len("1.0.0-"))
	if _, err := ParseVersion(long); err != nil {
		t.Errorf("ParseVersion of %d bytes: %v, want it accepted", len(long), err)
	}
	if _, err := ParseVersion(long + "a"); err == nil {
		t.Errorf("ParseVersion of %d bytes accepted, want it refused", len(long)+1)
	}
}

// FuzzVersion checks the parser against github.com/Masterminds/semver/v3,
// which ctrld-install used before (see Version): the same inputs are
// accepted, with the same parts, and ordered the same. The one known
// difference is kept out: Masterminds takes up to 256 bytes, this parser
// 128.
func FuzzVersion(f *testing.F) {
	for _, s := range versionSeeds {
		f.Add(s, "1.2.3-rc.1")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > maxVersionLen || len(b) > maxVersionLen {
			t.Skip()
		}
		va, err := ParseVersion(a)
		ma, merr := semver.StrictNewVersion(a)
		if (err == nil) != (merr == nil) {
			t.Fatalf("accepting %q: ParseVersion says %v, Masterminds says %v", a, err, merr)
		}
		if err != nil {
			return
		}
		if got, want := [3]uint64{va.Major(), va.Minor(), va.Patch()}, [3]uint64{ma.Major(), ma.Minor(), ma.Patch()}; got != want {
			t.Errorf("ParseVersion(%q) major, minor, patch = %d, Masterminds %d", a, got, want)
		}
		if got, want := va.Prerelease(), ma.Prerelease(); got != want {
			t.Errorf("ParseVersion(%q).Prerelease() = %q, Masterminds %q", a, got, want)
		}
		if got, want := va.Metadata(), ma.Metadata(); got != want {
			t.Errorf("ParseVersion(%q).Metadata() = %q, Masterminds %q", a, got, want)
		}
		if got, want := va.String(), ma.String(); got != want {
			t.Errorf("ParseVersion(%q).String() = %q, Masterminds %q", a, got, want)
		}
		vb, err := ParseVersion(b)
		mb, merr := semver.StrictNewVersion(b)
		if err != nil || merr != nil {
			return
		}
		if got, want := va.Compare(vb), ma.Compare(mb); got != want {
			t.Errorf("%q vs %q: Compare = %d, Masterminds %d", a, b, got, want)
		}
	})
}
