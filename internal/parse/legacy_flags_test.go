package parse

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

var ownFlags = []string{"--cd-org", "--cd"}

func TestClassifierUnknownFlag(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		found bool
		own   bool
		want  string // Result after SetOwnFlags
	}{
		{"own long flag", []string{"Error: unknown flag: --cd-org"}, true, true, codes.CtrldVersionUnsupported},
		{"own long flag, usage after it", []string{"Error: unknown flag: --cd-org", "Usage:", "  ctrld start [flags]", "", "unknown flag: --cd-org"}, true, true, codes.CtrldVersionUnsupported},
		{"other long flag", []string{"Error: unknown flag: --bogus-flag"}, true, false, codes.InstallerUsage},
		{"a longer flag that starts like an own one", []string{"Error: unknown flag: --cd-orgx"}, true, false, codes.InstallerUsage},
		{"an own flag's prefix", []string{"Error: unknown flag: --c"}, true, false, codes.InstallerUsage},
		{"trailing text and CRLF", []string{"Error: unknown flag: --cd-org \r"}, true, true, codes.CtrldVersionUnsupported},
		{"capitalised", []string{"Error: Unknown flag: --cd"}, true, true, codes.CtrldVersionUnsupported},
		{"shorthand", []string{"Error: unknown shorthand flag: 'x' in -xv"}, true, false, codes.InstallerUsage},
		{"escaped shorthand", []string{`Error: unknown shorthand flag: '\u00e9' in -` + "\xc3\xa9"}, true, false, codes.InstallerUsage},
		{"truncated shorthand", []string{"Error: unknown shorthand flag: '"}, true, false, codes.InstallerUsage},
		{"bare repeat only", []string{"unknown flag: --cd-org"}, true, true, codes.CtrldVersionUnsupported},
		{"first one counts", []string{"Error: unknown flag: --bogus", "Error: unknown flag: --cd-org"}, true, false, codes.InstallerUsage},
		{"logged at ERR", []string{"Nov 30 14:38:02.000 ERR unknown flag: --cd"}, true, true, codes.CtrldVersionUnsupported},
		{"logged below error level", []string{"Nov 30 14:38:02.000 INF unknown flag: --cd", "Nov 30 14:38:02.000 WRN unknown flag: --cd"}, false, false, ""},
		{"inside another message", []string{"Error: exit status 1: unknown flag: --cd"}, false, false, ""},
		{"other cobra errors", []string{`Error: unknown command "restart" for "ctrld"`, "Error: flag needs an argument: --cd"}, false, false, ""},
		{"usage text", []string{"      --cd-org string               Control D provision token"}, false, false, ""},
		{"not root first", []string{"Please relaunch process with admin/root privilege.", "Error: unknown flag: --cd-org"}, false, false, codes.InstallerNotRoot},
		{"a fatal first keeps its code", []string{"Nov 30 14:38:02.000 FTL network is not up yet", "Error: unknown flag: --x"}, true, false, codes.APIUnreachable},
		{"no output", nil, false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewClassifier()
			c.SetOwnFlags(ownFlags...)
			plain := NewClassifier()
			for _, l := range tt.lines {
				c.Line([]byte(l))
				plain.Line([]byte(l))
			}
			found, own := c.UnknownFlag()
			assert.Equal(t, tt.found, found, "found")
			assert.Equal(t, tt.own, own, "own")
			assert.Equal(t, tt.want, resultName(t, c))

			// Whose flag it was is unknown without SetOwnFlags: the flag
			// error alone is then not understood.
			found, own = plain.UnknownFlag()
			assert.Equal(t, tt.found, found, "found without own flags")
			assert.False(t, own, "own without own flags")
			if tt.want == codes.CtrldVersionUnsupported || tt.want == codes.InstallerUsage {
				assert.Empty(t, resultName(t, plain))
			} else {
				assert.Equal(t, tt.want, resultName(t, plain))
			}
		})
	}
}

func TestClassifierOwnShorthand(t *testing.T) {
	c := NewClassifier()
	c.SetOwnFlags("-x")
	c.Line([]byte("Error: unknown shorthand flag: 'x' in -xyz"))
	found, own := c.UnknownFlag()
	assert.True(t, found)
	assert.True(t, own)

	// An empty list says ctrld-install added nothing: any flag is the user's.
	c = NewClassifier()
	c.SetOwnFlags()
	c.Line([]byte("Error: unknown flag: --cd"))
	assert.Equal(t, codes.InstallerUsage, resultName(t, c))

	// "--" and "-" are not flags; a malformed own flag matches nothing.
	c = NewClassifier()
	c.SetOwnFlags("--", "-", "-'")
	c.Line([]byte("Error: unknown flag: --"))
	c.Line([]byte("Error: unknown shorthand flag: ''' in -'"))
	_, own = c.UnknownFlag()
	assert.False(t, own)
}

// The flag ctrld names may be anything the caller passed, including a
// secret typed into the wrong place: it must not be kept.
func TestClassifierUnknownFlagKeepsNoText(t *testing.T) {
	c := NewClassifier()
	c.SetOwnFlags(ownFlags...)
	c.Line([]byte("Error: unknown flag: --" + canaryToken))
	c.Line([]byte("unknown flag: --" + canaryToken))
	found, own := c.UnknownFlag()
	assert.True(t, found)
	assert.False(t, own)
	assert.NotContains(t, fmt.Sprintf("%+v", c), "CANARY")
	assertScratchZero(t, c)
}

func TestClassifierTerminal(t *testing.T) {
	tests := []struct {
		name     string
		lines    []string
		terminal bool
		want     string
	}{
		{"nothing", nil, false, ""},
		{"success", []string{"Mar  4 20:56:15.000 NTC Starting service", "Mar  4 20:56:17.730 NTC Service started"}, false, ""},
		{"a retry warning", []string{"Mar  4 20:56:17.000 WRN could not fetch resolver using bootstrap DNS, retrying..."}, false, ""},
		{"an old resolver warning", []string{`Nov 30 14:38:02.000 WRN could not fetch resolver config error="dial tcp: i/o timeout"`}, false, ""},
		{"an informational error", []string{"Mar  4 20:56:40.000 ERR failed to connect to upstream.0, endpoint: https://dns.controld.com/x"}, false, ""},
		{"a mapped fatal", []string{"Mar  4 20:56:16.100 FTL network is not up yet"}, true, codes.APIUnreachable},
		{"an unmapped fatal", []string{"Mar  4 20:56:16.100 FTL cannot run in daemon mode"}, true, ""},
		{"an unknown fatal", []string{"Mar  4 20:56:16.100 FTL something new"}, true, ""},
		{"a panic", []string{"panic: missing listener config"}, true, ""},
		{"an unmapped consequence", []string{`Nov 30 14:38:28.000 FTL failed to get default route interface error="no default route found"`}, true, ""},
		{"a consequence", []string{"Mar  4 20:56:15.900 ERR error running task Start: exit status 1"}, true, codes.ServiceStartFailed},
		{"a warning ctrld exits after", []string{"Mar  4 20:56:15.900 WRN post installation failed, please check system/service log for details error"}, true, codes.ServiceFailed},
		{"decisive", []string{"Mar  4 20:56:15.000 ERR deactivation pin is invalid"}, true, codes.DeactivationPinRequired},
		{"an unknown flag", []string{"Error: unknown flag: --x"}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewClassifier()
			for _, l := range tt.lines {
				c.Line([]byte(l))
			}
			assert.Equal(t, tt.terminal, c.Terminal())
			assert.Equal(t, tt.want, resultName(t, c))
			if _, ok := c.Result(); ok {
				assert.True(t, c.Terminal(), "a code always rests on a terminal failure")
			}
		})
	}
}

func TestClassifierUnknownFlagDoesNotAllocate(t *testing.T) {
	lines := [][]byte{
		[]byte("Error: unknown flag: --cd-org"),
		[]byte("Error: unknown shorthand flag: 'x' in -x"),
		[]byte("unknown flag: --bogus-flag"),
		[]byte("      --cd-org string               Control D provision token"),
	}
	c := NewClassifier()
	c.SetOwnFlags(ownFlags...)
	allocs := testing.AllocsPerRun(100, func() {
		c.unknownFlag, c.cause = flagNone, vNone
		for _, l := range lines {
			c.Line(l)
		}
	})
	assert.Zero(t, allocs)
	found, own := c.UnknownFlag()
	require.True(t, found)
	assert.True(t, own)
}

// Every verdict the classifier can give has a registered, non-OK code; the
// two for cobra's error only come with SetOwnFlags.
func TestClassifierUnknownFlagCodesAreRegistered(t *testing.T) {
	for _, v := range []verdict{vInstallerUsage, vCtrldVersionUnsupported} {
		c, ok := codes.Lookup(v.codeName())
		require.True(t, ok)
		assert.Equal(t, codes.StageInstaller, c.Stage)
		assert.True(t, strings.HasPrefix(v.String(), c.Name))
	}
}
