package parse

import (
	"bytes"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

// maxLegacyLine is how much of one line the classifier examines. The runner
// hands over longer lines truncated to this length; the cap is repeated here
// so that a caller that does not truncate cannot make the scratch buffer grow
// without bound.
const maxLegacyLine = 64 << 10

// Classifier chooses a registered code from the output of a ctrld that
// predates the failure contract. Feed it every line of ctrld's combined
// stdout+stderr in order, then ask for the result. It keeps O(1) state,
// never retains or returns any byte of its input.
//
// The rule it applies (docs/legacy-output.md has the reasoning):
//
//   - a decisive line (not root, deactivation PIN) wins outright, the first
//     one seen;
//   - otherwise the first cause wins: a fatal of the parent or of the
//     daemon, whose stage is bootstrap, listener or service, an error cobra
//     printed about an unknown flag (once SetOwnFlags was called), or an
//     understood fatal that no registered code fits, which makes the whole
//     output "not understood";
//   - otherwise, when the start command reported that the service did not
//     come up, a warning that explains why (the API could not be reached);
//   - otherwise the first service-stage consequence wins (the self-check
//     failure block, "error running task", and what the start command
//     prints after giving up).
//
// Lines below warning level never decide, whatever they say, and warnings
// never decide on their own: ctrld logs them in runs it recovers from.
type Classifier struct {
	decisive    verdict
	cause       verdict
	hint        verdict
	consequence verdict

	// unknownFlag is what cobra's first "unknown flag" error named, as a
	// flagVerdict: the flag itself is never kept.
	unknownFlag flagVerdict

	// ownFlags are the flags ctrld-install put on ctrld's command line. They
	// come from the caller, never from ctrld's output. ownFlagsSet tells an
	// empty list apart from no list.
	ownFlags    []string
	ownFlagsSet bool

	// buf is scratch for one line at a time: the line without ANSI escapes,
	// then the lower-cased tail of a recognised message. It is zeroed before
	// Line returns, so no byte of the input outlives the call.
	buf []byte
}

// NewClassifier returns a classifier that has seen no output.
func NewClassifier() *Classifier { return &Classifier{} }

// Line takes one line without its trailing '\n'. The line may carry ANSI
// escapes, a trailing '\r', NUL bytes, invalid UTF-8, and may be a truncated
// prefix of a very long line (up to 64 KiB). It must not retain line.
func (c *Classifier) Line(line []byte) {
	if c.decisive != vNone {
		return // ctrld exits right after a decisive line; nothing later matters
	}
	if len(line) > maxLegacyLine {
		line = line[:maxLegacyLine]
	}
	s, owned := line, false
	if hasANSIEscape(line) {
		if cap(c.buf) < len(line) {
			c.buf = make([]byte, 0, len(line))
		}
		c.buf = appendStripANSI(c.buf[:0], line)
		s, owned = c.buf, true
	}
	c.classify(TrimLineEnd(s), owned)
	if len(c.buf) > 0 {
		clear(c.buf)
		c.buf = c.buf[:0]
	}
}

// SetOwnFlags tells the classifier which flags ctrld-install itself put on
// ctrld's command line ("--cd-org", "--cd"; a shorthand as "-x"). When
// cobra then rejects one of them, the ctrld is too old for the way
// ctrld-install runs it (CTRLD_VERSION_UNSUPPORTED); when it rejects any
// other flag, that flag came from the extra flags after "--"
// (INSTALLER_USAGE). Without SetOwnFlags an unknown flag is not understood,
// because nothing says whose it was. Call it before the first Line.
func (c *Classifier) SetOwnFlags(flags ...string) {
	c.ownFlags = append(c.ownFlags[:0], flags...)
	c.ownFlagsSet = true
}

// UnknownFlag reports whether cobra printed an "unknown flag" or "unknown
// shorthand flag" error, and whether the flag it named is one passed to
// SetOwnFlags. Only the first such error counts: cobra stops at the first
// flag it does not know.
func (c *Classifier) UnknownFlag() (found, own bool) {
	return c.unknownFlag != flagNone, c.unknownFlag == flagOwn
}

// Result returns the code the output points to, and false when nothing in
// the output was understood. It never returns OK, and only registered codes.
//
// A code always rests on a failure ctrld does not recover from: a decisive
// line, a fatal, cobra's usage error, or the start command's own report that
// the service did not come up, possibly explained by a warning before it.
// Warnings alone give no code, so a run that logged them and then exited 0
// is left to the post-conditions. Terminal says whether such a failure was
// seen even when no code fits it.
func (c *Classifier) Result() (codes.Code, bool) {
	v := c.verdict()
	name := v.codeName()
	if name == "" {
		return codes.Code{}, false
	}
	return codes.Must(name), true
}

// Terminal reports whether ctrld printed a failure it does not recover from,
// whether or not a registered code fits it: a decisive line, a fatal, cobra's
// unknown-flag error, or what the start command prints once the service did
// not come up. When it is false, whatever else ctrld printed was at most a
// warning: exit 0 then still needs the post-conditions to decide.
func (c *Classifier) Terminal() bool {
	return c.decisive != vNone || c.cause != vNone || c.consequence != vNone || c.unknownFlag != flagNone
}

// verdict applies the tiers: see the type's comment.
func (c *Classifier) verdict() verdict {
	switch {
	case c.decisive != vNone:
		return c.decisive
	case c.cause != vNone:
		return c.cause
	case c.consequence == vNone:
		// A hint without a reported failure is a warning ctrld may well
		// have recovered from.
		return vNone
	case c.hint != vNone:
		return c.hint
	}
	return c.consequence
}

// classify records what one line (escapes removed, line end trimmed) says.
// owned reports whether s lives in c.buf and may be rewritten in place.
func (c *Classifier) classify(s []byte, owned bool) {
	lvl, msg := splitLogLine(s)
	if lvl == levelQuiet || len(msg) == 0 {
		return
	}
	if (lvl == levelError || lvl == levelUntagged) && c.unknownFlagLine(msg) {
		return
	}
	t, v := c.match(msg, lvl, owned)
	if v == vNone {
		if lvl != levelFatal {
			return
		}
		// A fatal nobody catalogued still ended that process: it is the
		// cause, and pinning a service code on its consequences would send
		// Support after the wrong thing.
		t, v = tierCause, vUnmapped
	}
	switch t {
	case tierDecisive:
		c.decisive = v
	case tierCause:
		if c.cause == vNone {
			c.cause = v
		}
	case tierHint:
		if c.hint == vNone {
			c.hint = v
		}
	case tierConsequence:
		if c.consequence == vNone {
			c.consequence = v
		}
	}
}

// match finds the catalogue rule for a message. It returns vNone when no
// rule applies at this level.
func (c *Classifier) match(msg []byte, lvl logLevel, owned bool) (evidenceTier, verdict) {
	for _, r := range legacyRulesByFirst()[asciiToLower(msg[0])] {
		if r.levels&lvl.bit() == 0 || !hasPrefixFoldASCII(msg, r.prefix) {
			continue
		}
		v := r.v
		if r.refine != nil {
			v = r.refine(c, msg[len(r.prefix):], lvl, owned)
		}
		if v != vNone {
			return r.tier, v
		}
	}
	return 0, vNone
}

// unknownFlagLine records cobra's "unknown flag: --name" and "unknown
// shorthand flag: 'x' in -xyz" (the wording of spf13/pflag), and reports
// whether msg was one. The flag is compared with the own flags and then
// forgotten.
func (c *Classifier) unknownFlagLine(msg []byte) bool {
	const long, short = "unknown flag: ", "unknown shorthand flag: "
	var fv flagVerdict
	switch {
	case hasPrefixFoldASCII(msg, long):
		name := msg[len(long):]
		if i := bytes.IndexAny(name, " \t"); i >= 0 {
			name = name[:i]
		}
		fv = flagOther
		for _, f := range c.ownFlags {
			if len(f) > 2 && f[:2] == "--" && string(name) == f {
				fv = flagOwn
			}
		}
	case hasPrefixFoldASCII(msg, short):
		// pflag quotes the byte with %q, so anything but a printable ASCII
		// letter arrives escaped and cannot be one of ours.
		q := msg[len(short):]
		fv = flagOther
		if len(q) >= 3 && q[0] == '\'' && q[2] == '\'' {
			for _, f := range c.ownFlags {
				if len(f) == 2 && f[0] == '-' && f[1] == q[1] && f[1] != '-' {
					fv = flagOwn
				}
			}
		}
	default:
		return false
	}
	if c.unknownFlag != flagNone {
		return true // cobra stops at the first; a repeat names the same flag
	}
	c.unknownFlag = fv
	if c.ownFlagsSet && c.cause == vNone {
		if fv == flagOwn {
			c.cause = vCtrldVersionUnsupported
		} else {
			c.cause = vInstallerUsage
		}
	}
	return true
}

// lowered returns b in lower case. When b lives in c.buf it is rewritten in
// place; otherwise it is copied into c.buf, which Line zeroes afterwards.
func (c *Classifier) lowered(b []byte, owned bool) []byte {
	if !owned {
		if cap(c.buf) < len(b) {
			c.buf = make([]byte, 0, len(b))
		}
		c.buf = append(c.buf[:0], b...)
		b = c.buf
	}
	for i, x := range b {
		b[i] = asciiToLower(x)
	}
	return b
}

// evidenceTier orders the kinds of evidence; a higher tier beats a lower one no
// matter where in the output it appears.
type evidenceTier uint8

const (
	tierConsequence evidenceTier = iota + 1
	tierHint
	tierCause
	tierDecisive
)

// verdict is what the classifier keeps about a line: the name of a
// registered code, taken from the registry and never from what ctrld
// printed, or one of the classifier's own two words. The registry is the
// one list of codes; these are its names, not a second enum.
type verdict string

const (
	vNone verdict = ""
	// vUnmapped is a cause the classifier recognises but for which no
	// registered code fits (panics, unknown fatals, a consequence alone).
	vUnmapped verdict = "unmapped"
)

// The verdicts the catalogue gives. vInstallerUsage is ctrld refusing a
// flag that came from the extra flags after "--" (part of ctrld-install's
// command line, rejected before anything changed); vCtrldVersionUnsupported
// is ctrld not knowing a flag ctrld-install itself added: it predates it.
const (
	vBootstrapFailed                   = verdict(codes.BootstrapFailed)
	vAPIUnreachable                    = verdict(codes.APIUnreachable)
	vAPIRejected                       = verdict(codes.APIRejected)
	vAPIDeviceInvalid                  = verdict(codes.APIDeviceInvalid)
	vAPIResponseInvalid                = verdict(codes.APIResponseInvalid)
	vAPITLSFailed                      = verdict(codes.APITLSFailed)
	vConfigInvalid                     = verdict(codes.ConfigInvalid)
	vHostFilesFailed                   = verdict(codes.HostFilesFailed)
	vListenerFailed                    = verdict(codes.ListenerFailed)
	vListenerBindFailed                = verdict(codes.ListenerBindFailed)
	vListenerConfiguredAddrUnavailable = verdict(codes.ListenerConfiguredAddrUnavailable)
	vServiceFailed                     = verdict(codes.ServiceFailed)
	vServiceInstallFailed              = verdict(codes.ServiceInstallFailed)
	vServiceStartFailed                = verdict(codes.ServiceStartFailed)
	vServiceSelfcheckFailed            = verdict(codes.ServiceSelfcheckFailed)
	vDeactivationPinRequired           = verdict(codes.DeactivationPinRequired)
	vInstallerNotRoot                  = verdict(codes.InstallerNotRoot)
	vInstallerUsage                    = verdict(codes.InstallerUsage)
	vCtrldVersionUnsupported           = verdict(codes.CtrldVersionUnsupported)
)

// codeName is the registered code for v, or "" when v names none.
func (v verdict) codeName() string {
	if c, ok := codes.Lookup(string(v)); ok && !c.IsOK() {
		return c.Name
	}
	return ""
}

// String makes a Classifier readable in %+v without exposing anything but
// fixed names.
func (v verdict) String() string {
	switch v {
	case vNone:
		return "none"
	case vUnmapped:
		return "unmapped"
	}
	if n := v.codeName(); n != "" {
		return n
	}
	return "invalid"
}

// flagVerdict is what the classifier keeps of cobra's unknown-flag error.
type flagVerdict uint8

const (
	flagNone flagVerdict = iota
	flagOther
	flagOwn
)

func (f flagVerdict) String() string {
	switch f {
	case flagNone:
		return "none"
	case flagOther:
		return "other"
	case flagOwn:
		return "own"
	}
	return "invalid"
}
