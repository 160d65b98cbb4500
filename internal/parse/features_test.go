package parse

import (
	"testing"
)

func TestFlagSupported(t *testing.T) {
	v := func(s string) *Version {
		t.Helper()
		x, err := ParseCtrldVersion(s)
		if err != nil {
			t.Fatalf("ParseCtrldVersion(%q): %v", s, err)
		}
		return x
	}
	tests := []struct {
		version string // "" is a dev build: no version
		flag    string
		want    bool
	}{
		{"1.1.3", FeatureCd, true},
		{"1.0.0", FeatureCd, true},
		{"1.1.3", FeatureCdOrg, false},
		{"v1.2.1-0c99d27", FeatureCdOrg, false},
		{"v1.3.0-0ca37dc", FeatureCdOrg, true},
		{"v1.5.0", FeatureCdOrg, true},
		{"v2.0.0-beta.1", FeatureCdOrg, true},
		{"v1.2.2", FeatureCdOrg, true}, // not checked: tried, not refused
		{"v1.3.0-rc1", FeatureCdOrg, true},
		{"dev-2926c76", FeatureCdOrg, true},
		{"v1.2.1-0c99d27", FeatureStatus, false},
		{"v1.3.0-0ca37dc", FeatureStatus, true},
		{"v1.2.1-0c99d27", FeatureRestart, false},
		{"v1.4.0-e30ad31", FeatureRestart, true},
		{"v1.5.0", FeatureRestart, true},
		{"v1.1.3", FeatureUninstall, false},
		{"v1.5.0", FeatureUninstallPin, true},
		{"v1.2.1-0c99d27", FeatureUninstallCleanup, false},
		{"v1.2.1-0c99d27", "--not-in-the-table", true},
	}
	for _, tt := range tests {
		var ver *Version
		if tt.version != "dev-2926c76" {
			ver = v(tt.version)
		}
		if got := FlagSupported(ver, tt.flag); got != tt.want {
			t.Errorf("FlagSupported(%s, %s) = %v, want %v", tt.version, tt.flag, got, tt.want)
		}
	}
}

func TestMinVersionFor(t *testing.T) {
	if got := MinVersionFor(FeatureCd); got != nil {
		t.Errorf("MinVersionFor(%s) = %s, want nil: no release is known to lack --cd", FeatureCd, got)
	}
	if got := MinVersionFor("--not-in-the-table"); got != nil {
		t.Errorf("MinVersionFor(--not-in-the-table) = %s, want nil", got)
	}
	if got, want := MinVersionFor(FeatureCdOrg).String(), "1.3.0"; got != want {
		t.Errorf("MinVersionFor(%s) = %s, want %s", FeatureCdOrg, got, want)
	}
	if got, want := MinVersionFor(FeatureRestart).String(), "1.5.0"; got != want {
		t.Errorf("MinVersionFor(%s) = %s, want %s", FeatureRestart, got, want)
	}

	// The result is the caller's: changing it changes nothing here.
	m := MinVersionFor(FeatureCdOrg)
	*m = *MustParseVersion("9.9.9")
	if got, want := MinVersionFor(FeatureCdOrg).String(), "1.3.0"; got != want {
		t.Errorf("after changing its result, MinVersionFor(%s) = %s, want %s", FeatureCdOrg, got, want)
	}
}

func TestFeatureTableIsConsistent(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range features {
		if seen[f.name] {
			t.Errorf("%s listed twice", f.name)
		}
		seen[f.name] = true
		if f.since == nil {
			t.Fatalf("%s: since is nil", f.name)
		}
		if f.lastWithout != nil {
			if !f.lastWithout.LessThan(f.since) {
				t.Errorf("%s: last without %s is not before %s", f.name, f.lastWithout, f.since)
			}
			if FlagSupported(f.lastWithout, f.name) {
				t.Errorf("FlagSupported(%s, %s) = true, want false", f.lastWithout, f.name)
			}
			if !FlagSupported(f.since, f.name) {
				t.Errorf("FlagSupported(%s, %s) = false, want true", f.since, f.name)
			}
			if got := MinVersionFor(f.name); !got.Equal(f.since) {
				t.Errorf("MinVersionFor(%s) = %s, want %s", f.name, got, f.since)
			}
		}
	}
	for _, name := range []string{FeatureCd, FeatureCdOrg, FeatureStatus, FeatureRestart, FeatureUninstall, FeatureUninstallPin, FeatureUninstallCleanup} {
		if !seen[name] {
			t.Errorf("%s is not in the table", name)
		}
	}
}
