package parse

import (
	"fmt"
	"strings"
	"testing"

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
			if found != tt.found {
				t.Errorf("UnknownFlag() found = %v, want %v", found, tt.found)
			}
			if own != tt.own {
				t.Errorf("UnknownFlag() own = %v, want %v", own, tt.own)
			}
			if got := resultName(t, c); got != tt.want {
				t.Errorf("Result() = %q, want %q", got, tt.want)
			}

			// Whose flag it was is unknown without SetOwnFlags: the flag
			// error alone is then not understood.
			found, own = plain.UnknownFlag()
			if found != tt.found {
				t.Errorf("without own flags, UnknownFlag() found = %v, want %v", found, tt.found)
			}
			if own {
				t.Errorf("without own flags, UnknownFlag() own = true, want false")
			}
			if tt.want == codes.CtrldVersionUnsupported || tt.want == codes.InstallerUsage {
				if got := resultName(t, plain); got != "" {
					t.Errorf("without own flags, Result() = %q, want none", got)
				}
			} else {
				if got := resultName(t, plain); got != tt.want {
					t.Errorf("without own flags, Result() = %q, want %q", got, tt.want)
				}
			}
		})
	}
}

func TestClassifierOwnShorthand(t *testing.T) {
	c := NewClassifier()
	c.SetOwnFlags("-x")
	c.Line([]byte("Error: unknown shorthand flag: 'x' in -xyz"))
	found, own := c.UnknownFlag()
	if !found {
		t.Errorf("own flag -x: UnknownFlag() found = false, want true")
	}
	if !own {
		t.Errorf("own flag -x: UnknownFlag() own = false, want true")
	}

	// An empty list says ctrld-install added nothing: any flag is the user's.
	c = NewClassifier()
	c.SetOwnFlags()
	c.Line([]byte("Error: unknown flag: --cd"))
	if got := resultName(t, c); got != codes.InstallerUsage {
		t.Errorf("no own flags, unknown --cd: Result() = %q, want %s", got, codes.InstallerUsage)
	}

	// "--" and "-" are not flags; a malformed own flag matches nothing.
	c = NewClassifier()
	c.SetOwnFlags("--", "-", "-'")
	c.Line([]byte("Error: unknown flag: --"))
	c.Line([]byte("Error: unknown shorthand flag: ''' in -'"))
	_, own = c.UnknownFlag()
	if own {
		t.Errorf("own flags --, - and -': UnknownFlag() own = true, want false")
	}
}

// The flag ctrld names may be anything the caller passed, including a
// secret typed into the wrong place: it must not be kept.
func TestClassifierUnknownFlagKeepsNoText(t *testing.T) {
	c := NewClassifier()
	c.SetOwnFlags(ownFlags...)
	c.Line([]byte("Error: unknown flag: --" + canaryToken))
	c.Line([]byte("unknown flag: --" + canaryToken))
	found, own := c.UnknownFlag()
	if !found {
		t.Errorf("UnknownFlag() found = false, want true")
	}
	if own {
		t.Errorf("UnknownFlag() own = true, want false")
	}
	if s := fmt.Sprintf("%+v", c); strings.Contains(s, "CANARY") {
		t.Errorf("the classifier keeps the flag's text: %s", s)
	}
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
			if got := c.Terminal(); got != tt.terminal {
				t.Errorf("Terminal() = %v, want %v", got, tt.terminal)
			}
			if got := resultName(t, c); got != tt.want {
				t.Errorf("Result() = %q, want %q", got, tt.want)
			}
			if code, ok := c.Result(); ok && !c.Terminal() {
				t.Errorf("Result() = %s, but Terminal() = false: a code always rests on a terminal failure", code.Name)
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
	if allocs != 0 {
		t.Errorf("Line allocates %v times for unknown-flag lines, want 0", allocs)
	}
	found, own := c.UnknownFlag()
	if !found {
		t.Fatalf("UnknownFlag() found = false, want true")
	}
	if !own {
		t.Errorf("UnknownFlag() own = false, want true")
	}
}

// Every verdict the classifier can give has a registered, non-OK code; the
// two for cobra's error only come with SetOwnFlags.
func TestClassifierUnknownFlagCodesAreRegistered(t *testing.T) {
	for _, v := range []verdict{vInstallerUsage, vCtrldVersionUnsupported} {
		c, ok := codes.Lookup(v.codeName())
		if !ok {
			t.Fatalf("codes.Lookup(%q) found nothing", v.codeName())
		}
		if c.Stage != codes.StageInstaller {
			t.Errorf("%s: stage %q, want %q", c.Name, c.Stage, codes.StageInstaller)
		}
		if !strings.HasPrefix(v.String(), c.Name) {
			t.Errorf("verdict %q does not start with its code %s", v.String(), c.Name)
		}
	}
}
