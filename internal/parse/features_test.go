package parse

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFlagSupported(t *testing.T) {
	v := func(s string) *Version {
		t.Helper()
		x, err := ParseCtrldVersion(s)
		require.NoError(t, err)
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
		assert.Equal(t, tt.want, FlagSupported(ver, tt.flag), "%s %s", tt.version, tt.flag)
	}
}

func TestMinVersionFor(t *testing.T) {
	assert.Nil(t, MinVersionFor(FeatureCd), "no release is known to lack --cd")
	assert.Nil(t, MinVersionFor("--not-in-the-table"))
	assert.Equal(t, "1.3.0", MinVersionFor(FeatureCdOrg).String())
	assert.Equal(t, "1.5.0", MinVersionFor(FeatureRestart).String())

	// The result is the caller's: changing it changes nothing here.
	m := MinVersionFor(FeatureCdOrg)
	*m = *MustParseVersion("9.9.9")
	assert.Equal(t, "1.3.0", MinVersionFor(FeatureCdOrg).String())
}

func TestFeatureTableIsConsistent(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range features {
		assert.False(t, seen[f.name], "%s listed twice", f.name)
		seen[f.name] = true
		require.NotNil(t, f.since, f.name)
		if f.lastWithout != nil {
			assert.True(t, f.lastWithout.LessThan(f.since), "%s: last without %s is not before %s", f.name, f.lastWithout, f.since)
			assert.False(t, FlagSupported(f.lastWithout, f.name))
			assert.True(t, FlagSupported(f.since, f.name))
			assert.True(t, MinVersionFor(f.name).Equal(f.since))
		}
	}
	for _, name := range []string{FeatureCd, FeatureCdOrg, FeatureStatus, FeatureRestart, FeatureUninstall, FeatureUninstallPin, FeatureUninstallCleanup} {
		assert.True(t, seen[name], "%s is not in the table", name)
	}
}
