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
// It is written by Identifier and FailureLine and read by ParseTriple
// (ParseIdentifier and FindTriple build on it), and nowhere else.

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

// Triple is an identifier as written, before the registry is consulted:
// its stage, its code name and its exit number, which may name no
// registered code or disagree with the registry. Stage and Name are
// sub-slices of the parsed bytes.
type Triple struct {
	Stage, Name []byte
	Exit        int
}

// ParseTriple reads the identifier grammar at the start of b and returns
// what follows the closing parenthesis. The stage is lower-case letters,
// the name upper-case letters and underscores, and the exit number is
// written by %d: no sign, no leading zero, at most three digits.
func ParseTriple(b []byte) (t Triple, rest []byte, ok bool) {
	rest, ok = bytes.CutPrefix(b, stagePrefix)
	if !ok {
		return Triple{}, nil, false
	}
	if t.Stage, rest, ok = cutRun(rest, isLower); !ok {
		return Triple{}, nil, false
	}
	if rest, ok = bytes.CutPrefix(rest, codeInfix); !ok {
		return Triple{}, nil, false
	}
	if t.Name, rest, ok = cutRun(rest, isUpperOrUnderscore); !ok {
		return Triple{}, nil, false
	}
	if rest, ok = bytes.CutPrefix(rest, exitInfix); !ok {
		return Triple{}, nil, false
	}
	num, rest, ok := cutRun(rest, isDigit)
	if !ok || len(num) > 3 || (num[0] == '0' && len(num) > 1) || len(rest) == 0 || rest[0] != ')' {
		return Triple{}, nil, false
	}
	t.Exit, _ = strconv.Atoi(string(num))
	return t, rest[1:], true
}

// Code is the registered code t names, when its stage and exit agree with
// the registry.
func (t Triple) Code() (Code, bool) { return agreesBytes(t.Stage, t.Name, t.Exit) }

// ParseIdentifier reads an identifier at the start of b that agrees with
// the registry and returns the code and what follows the closing
// parenthesis.
func ParseIdentifier(b []byte) (c Code, rest []byte, ok bool) {
	t, rest, ok := ParseTriple(b)
	if !ok {
		return Code{}, nil, false
	}
	if c, ok = t.Code(); !ok {
		return Code{}, nil, false
	}
	return c, rest, true
}

// FindTriple finds the first text in b written in the identifier grammar,
// whether or not it agrees with the registry: "stage=" at the start of a
// word, so "xstage=" is not one. start and end are its bounds in b.
func FindTriple(b []byte) (t Triple, start, end int, ok bool) {
	off := 0
	for {
		i := bytes.Index(b[off:], stagePrefix)
		if i < 0 {
			return Triple{}, 0, 0, false
		}
		at := off + i
		if at == 0 || !isWordByte(b[at-1]) {
			if t, rest, ok := ParseTriple(b[at:]); ok {
				return t, at, len(b) - len(rest), true
			}
		}
		off = at + len(stagePrefix)
	}
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
