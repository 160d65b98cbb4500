package parse

import (
	"bytes"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

var identifierPrefix = []byte(codes.VerbProvisioning + " failed: ")

// IdentifierLine reports the code named by a ctrld identifier line:
//
//	provisioning failed: stage=<stage> code=<CODE> (exit <N>)
//
// The pattern must be the whole line once ANSI escapes and trailing white
// space are removed; text before or after it (a log prefix, an appended
// token) makes it not an identifier. The triple must agree with the registry
// and name a stage ctrld can fail in: ctrld cannot speak for ctrld-install's
// own installer stage, nor claim success on a failure line.
func IdentifierLine(line []byte) (codes.Code, bool) {
	// Nearly every line ctrld prints starts with a timestamp. Rejecting
	// those before stripping colours keeps the scan free of allocations.
	if rest := skipLeadingEscapes(line); len(rest) == 0 || rest[0] != identifierPrefix[0] {
		return codes.Code{}, false
	}
	line = TrimLineEnd(StripANSI(line))
	rest, ok := bytes.CutPrefix(line, identifierPrefix)
	if !ok {
		return codes.Code{}, false
	}
	c, rest, ok := codes.ParseIdentifier(rest)
	if !ok || len(rest) != 0 {
		return codes.Code{}, false
	}
	return ctrldCode(c)
}

// ctrldCode accepts a registered code reported by ctrld (identifier line or
// result file) when it belongs to a stage ctrld can fail in: ctrld cannot
// speak for ctrld-install's own installer stage, nor claim success.
func ctrldCode(c codes.Code) (codes.Code, bool) {
	switch c.Stage {
	case codes.StageBootstrap, codes.StageListener, codes.StageService:
		return c, true
	}
	return codes.Code{}, false
}
