package parse

// The flags and commands ctrld-install asks of ctrld, as FlagSupported and
// MinVersionFor name them.
const (
	FeatureCd               = "--cd"
	FeatureCdOrg            = "--cd-org"
	FeatureStatus           = "status"
	FeatureRestart          = "restart"
	FeatureUninstall        = "uninstall"
	FeatureUninstallPin     = "uninstall --pin"
	FeatureUninstallCleanup = "uninstall --cleanup"
	// FeatureSelfCheckName: the daemon answers ctrld.test. itself, with
	// 0.0.0.0, without asking its upstream.
	FeatureSelfCheckName = "ctrld.test."
)

// feature is what is known of one flag or command across ctrld releases.
// docs/legacy-output.md has the same table with its sources; a test keeps
// the two equal.
type feature struct {
	name string
	// since is the earliest release known to have it.
	since *Version
	// lastWithout is the latest release known to lack it; nil for none.
	lastWithout *Version
}

// features lists only what was seen: in the captures of real releases, in
// the v1.2.1 source, or in the reference for v1.5.0. Releases between
// lastWithout and since were not checked.
var features = []feature{
	{FeatureCd, release("1.1.3"), nil},
	{FeatureCdOrg, release("1.3.0"), release("1.2.1")},
	{FeatureStatus, release("1.3.0"), release("1.2.1")},
	{FeatureRestart, release("1.5.0"), release("1.2.1")},
	{FeatureUninstall, release("1.5.0"), release("1.2.1")},
	{FeatureUninstallPin, release("1.5.0"), release("1.2.1")},
	{FeatureUninstallCleanup, release("1.5.0"), release("1.2.1")},
	{FeatureSelfCheckName, release("1.3.6"), release("1.3.5")},
}

func release(s string) *Version { return MustParseVersion(s) }

func lookupFeature(name string) (feature, bool) {
	for _, f := range features {
		if f.name == name {
			return f, true
		}
	}
	return feature{}, false
}

// FlagSupported reports whether ctrld v has the flag or command named by
// one of the Feature constants. It says false only for a version known to
// lack it: a nil version (a dev build, or no version at all), a version
// nobody checked and an unlisted name all give true. Refusing a ctrld that
// would have worked costs a failed enrolment, while trying one that lacks
// the flag costs one run, whose cobra error the Classifier recognises.
func FlagSupported(v *Version, flag string) bool {
	f, ok := lookupFeature(flag)
	if v == nil || !ok || f.lastWithout == nil {
		return true
	}
	return v.GreaterThan(f.lastWithout)
}

// MinVersionFor returns the earliest ctrld release known to have the flag or
// command, or nil when no release is known to lack it (or the name is not
// listed). Releases after the last one known to lack it and before this one
// were not checked; FlagSupported gives them the benefit of the doubt.
func MinVersionFor(flag string) *Version {
	f, ok := lookupFeature(flag)
	if !ok || f.lastWithout == nil {
		return nil
	}
	v := *f.since
	return &v
}
