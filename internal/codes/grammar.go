package codes

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// The identifier grammar is ctrld's own, so one grep finds a failure on
// every surface, whoever printed it:
//
//	<verb> failed: stage=<stage> code=<CODE> (exit <N>)
//
// It is written by Identifier and FailureLine and read by ParseIdentifier
// and FindIdentifier, and nowhere else.

// Verbs name what failed in a failure line.
const (
	VerbProvisioning = "provisioning" // install, and ctrld's own identifier line
	VerbUninstall    = "uninstall"
	VerbVerify       = "verify"
)

// Identifier formats c as "stage=<stage> code=<CODE> (exit <N>)".
func Identifier(c Code) string {
	return fmt.Sprintf("stage=%s code=%s (exit %d)", c.Stage, c.Name, c.Exit)
}

// FailureLine formats "<verb> failed: " followed by c's identifier.
func FailureLine(verb string, c Code) string {
	return verb + " failed: " + Identifier(c)
}

var (
	stagePrefix = []byte("stage=")
	codeInfix   = []byte(" code=")
	exitInfix   = []byte(" (exit ")
)

// ParseIdentifier reads an identifier at the start of b and returns the
// code and what follows the closing parenthesis. The triple must agree with
// the registry. The exit number is written by %d: no sign, no leading zero,
// at most three digits.
func ParseIdentifier(b []byte) (c Code, rest []byte, ok bool) {
	rest, ok = bytes.CutPrefix(b, stagePrefix)
	if !ok {
		return Code{}, nil, false
	}
	stage, rest, ok := cutRun(rest, isLower)
	if !ok {
		return Code{}, nil, false
	}
	if rest, ok = bytes.CutPrefix(rest, codeInfix); !ok {
		return Code{}, nil, false
	}
	name, rest, ok := cutRun(rest, isUpperOrUnderscore)
	if !ok {
		return Code{}, nil, false
	}
	if rest, ok = bytes.CutPrefix(rest, exitInfix); !ok {
		return Code{}, nil, false
	}
	num, rest, ok := cutRun(rest, isDigit)
	if !ok || len(num) > 3 || (num[0] == '0' && len(num) > 1) || len(rest) == 0 || rest[0] != ')' {
		return Code{}, nil, false
	}
	exit, _ := strconv.Atoi(string(num))
	c, ok = agreesBytes(stage, name, exit)
	if !ok {
		return Code{}, nil, false
	}
	return c, rest[1:], true
}

// FindIdentifier finds the first identifier anywhere in b that agrees with
// the registry. start is where "stage=" begins, so a caller can look at the
// words before it (the verb).
func FindIdentifier(b []byte) (c Code, start int, rest []byte, ok bool) {
	off := 0
	for {
		i := bytes.Index(b[off:], stagePrefix)
		if i < 0 {
			return Code{}, 0, nil, false
		}
		at := off + i
		// "xstage=" is not an identifier: the word must start there.
		if at == 0 || !isWordByte(b[at-1]) {
			if c, rest, ok := ParseIdentifier(b[at:]); ok {
				return c, at, rest, true
			}
		}
		off = at + len(stagePrefix)
	}
}

// FailureVerb reports the verb of a failure line whose identifier starts at
// start in line: the word before " failed: ", or "" when the identifier is
// not preceded by one.
func FailureVerb(line []byte, start int) string {
	before, ok := bytes.CutSuffix(line[:start], []byte(" failed: "))
	if !ok {
		return ""
	}
	i := len(before)
	for i > 0 && isLower(before[i-1]) {
		i--
	}
	switch string(before[i:]) {
	case VerbProvisioning:
		return VerbProvisioning
	case VerbUninstall:
		return VerbUninstall
	case VerbVerify:
		return VerbVerify
	}
	return ""
}

// CutName splits off the leading run of bytes a code name is made of.
func CutName(b []byte) (name, rest []byte) {
	name, rest, _ = cutRun(b, isUpperOrUnderscore)
	return name, rest
}

// ExitRanges describes each stage's exit range from the registry's stages,
// as "30-39 bootstrap, 40-49 listener, ...".
func ExitRanges() string {
	parts := make([]string, 0, len(Stages))
	for _, s := range Stages {
		lo, hi := s.ExitRange()
		parts = append(parts, fmt.Sprintf("%d-%d %s", lo, hi, s))
	}
	return strings.Join(parts, ", ")
}

func agreesBytes(stage, name []byte, exit int) (Code, bool) {
	// byName[string(b)] does not allocate.
	c, ok := byName[string(name)]
	if !ok || string(c.Stage) != string(stage) || c.Exit != exit {
		return Code{}, false
	}
	return c, true
}

// cutRun splits off the longest non-empty prefix of b whose bytes satisfy in.
func cutRun(b []byte, in func(byte) bool) (run, rest []byte, ok bool) {
	i := 0
	for i < len(b) && in(b[i]) {
		i++
	}
	return b[:i], b[i:], i > 0
}

// The byte classes of the grammar and of the words around it.
func isLower(c byte) bool             { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool             { return c >= '0' && c <= '9' }
func isUpperOrUnderscore(c byte) bool { return c >= 'A' && c <= 'Z' || c == '_' }
func isWordByte(c byte) bool          { return isLower(c) || isUpperOrUnderscore(c) || isDigit(c) }
