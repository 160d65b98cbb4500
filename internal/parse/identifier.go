package parse

import (
	"bytes"
	"strconv"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

var identifierPrefix = []byte("provisioning failed: stage=")

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
	stage, rest, ok := cutRun(rest, isLower)
	if !ok {
		return codes.Code{}, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(" code=")); !ok {
		return codes.Code{}, false
	}
	name, rest, ok := cutRun(rest, isUpperOrUnderscore)
	if !ok {
		return codes.Code{}, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(" (exit ")); !ok {
		return codes.Code{}, false
	}
	num, rest, ok := cutRun(rest, isDigit)
	// The number is printed by %d: no sign, no leading zero, at most 3 digits.
	if !ok || len(num) > 3 || (num[0] == '0' && len(num) > 1) || string(rest) != ")" {
		return codes.Code{}, false
	}
	exit, _ := strconv.Atoi(string(num))
	return ctrldCode(string(stage), string(name), exit)
}

// ctrldCode accepts a triple reported by ctrld (identifier line or result
// file) when it is registered exactly so and belongs to a ctrld stage.
func ctrldCode(stage, name string, exit int) (codes.Code, bool) {
	c, ok := codes.Agrees(stage, name, exit)
	if !ok {
		return codes.Code{}, false
	}
	switch c.Stage {
	case codes.StageBootstrap, codes.StageListener, codes.StageService:
		return c, true
	}
	return codes.Code{}, false
}

func cutRun(b []byte, in func(byte) bool) (run, rest []byte, ok bool) {
	i := 0
	for i < len(b) && in(b[i]) {
		i++
	}
	return b[:i], b[i:], i > 0
}

func isLower(c byte) bool             { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool             { return c >= '0' && c <= '9' }
func isUpperOrUnderscore(c byte) bool { return c >= 'A' && c <= 'Z' || c == '_' }
