package parse

import "github.com/Control-D-Inc/ctrld-install/internal/codes"

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
//     daemon, whose stage is bootstrap, listener or service, or an
//     understood fatal that no registered code fits, which makes the whole
//     output "not understood";
//   - otherwise a sign that the daemon was still retrying the API when the
//     start command gave up;
//   - otherwise the first service-stage consequence wins (the self-check
//     failure block, "error running task", and what the start command
//     prints after giving up).
//
// Lines below warning level never decide, whatever they say.
type Classifier struct {
	decisive    verdict
	cause       verdict
	hint        verdict
	consequence verdict

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

// Result returns the code the output points to, and false when nothing in
// the output was understood. It never returns OK, and only registered codes.
func (c *Classifier) Result() (codes.Code, bool) {
	v := c.decisive
	if v == vNone {
		v = c.cause
	}
	if v == vNone {
		v = c.hint
	}
	if v == vNone {
		v = c.consequence
	}
	name := v.codeName()
	if name == "" {
		return codes.Code{}, false
	}
	return codes.Must(name), true
}

// classify records what one line (escapes removed, line end trimmed) says.
// owned reports whether s lives in c.buf and may be rewritten in place.
func (c *Classifier) classify(s []byte, owned bool) {
	lvl, msg := splitLogLine(s)
	if lvl == levelQuiet || len(msg) == 0 {
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
	for _, r := range legacyRulesByFirst[asciiToLower(msg[0])] {
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

// verdict is what the classifier keeps about a line: a small enum, never
// text, so that nothing printed by ctrld can be retained or echoed.
type verdict uint8

const (
	vNone verdict = iota
	// vUnmapped is a cause the classifier recognises but for which no
	// registered code fits (config and usage fatals, panics, unknown fatals).
	vUnmapped
	vBootstrapFailed
	vAPIUnreachable
	vAPIRejected
	vAPIDeviceInvalid
	vListenerFailed
	vListenerBindFailed
	vListenerConfiguredAddrUnavailable
	vServiceFailed
	vServiceInstallFailed
	vServiceStartFailed
	vServiceSelfcheckFailed
	vDeactivationPinRequired
	vInstallerNotRoot
	numVerdicts
)

var verdictCodes = [numVerdicts]string{
	vBootstrapFailed:                   codes.BootstrapFailed,
	vAPIUnreachable:                    codes.APIUnreachable,
	vAPIRejected:                       codes.APIRejected,
	vAPIDeviceInvalid:                  codes.APIDeviceInvalid,
	vListenerFailed:                    codes.ListenerFailed,
	vListenerBindFailed:                codes.ListenerBindFailed,
	vListenerConfiguredAddrUnavailable: codes.ListenerConfiguredAddrUnavailable,
	vServiceFailed:                     codes.ServiceFailed,
	vServiceInstallFailed:              codes.ServiceInstallFailed,
	vServiceStartFailed:                codes.ServiceStartFailed,
	vServiceSelfcheckFailed:            codes.ServiceSelfcheckFailed,
	vDeactivationPinRequired:           codes.DeactivationPinRequired,
	vInstallerNotRoot:                  codes.InstallerNotRoot,
}

// codeName is the registered code for v, or "" when v names none.
func (v verdict) codeName() string {
	if v >= numVerdicts {
		return ""
	}
	return verdictCodes[v]
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
