package parse

import "bytes"

// logLevel is how loudly a line was logged, folded into what matters for
// classification.
type logLevel uint8

const (
	// levelQuiet is TRC DBG INF NTC (v1) and DEBUG INFO (v2). These lines
	// never decide: -v and -vv print per-attempt errors at INF/DBG that the
	// run recovers from.
	levelQuiet logLevel = iota
	// levelWarn is WRN (v1) and NOTICE/WARN (v2, which prints warnings as
	// NOTICE).
	levelWarn
	levelError
	// levelFatal is FTL PNC (v1), FATAL PANIC DPANIC (v2), and a Go "panic:"
	// or "fatal error:" line: the process that printed it exits.
	levelFatal
	// levelUntagged is text with no level of its own: zerolog Write events
	// ("???"), whose remainder is not itself a log line, and bare lines. The
	// start command writes the self-check block this way, and a replayed
	// daemon chunk can split a line anywhere, even between level and message.
	levelUntagged
)

func (l logLevel) bit() logLevels { return 1 << l }

// logLevels says at which levels a catalogue rule applies.
type logLevels uint8

const (
	atError logLevels = 1<<levelError | 1<<levelFatal | 1<<levelUntagged
	atWarn  logLevels = 1<<levelWarn | atError
)

// legacyExitMarker is what the daemon writes to the start command's log
// socket just before a fatal. Start commands that do not filter it out
// replay it verbatim, glued to the front of the fatal line.
const legacyExitMarker = "$$EXIT$$"

// splitLogLine finds the level and the message of one line of ctrld output.
// It understands, possibly nested:
//
//	Mar  4 20:56:16.000 FTL message error=...            zerolog console (v1)
//	Mar  4 20:56:16.000 ??? <anything>                    zerolog Write event
//	Mar  4 20:56:16.000\tFATAL\tMessage\t{"error":"..."}  zap console (v2)
//	Error: unknown flag: --x                              cobra (stderr)
//	panic: missing listener config                        Go runtime (stderr)
//
// Anything else is an untagged message: a replayed daemon chunk shows its
// second and later lines without the parent's prefix.
func splitLogLine(s []byte) (logLevel, []byte) {
	for {
		for bytes.HasPrefix(s, []byte(legacyExitMarker)) {
			s = s[len(legacyExitMarker):]
		}
		n := stampLen(s)
		if n == 0 {
			return splitBare(s)
		}
		s = s[n:]
		if len(s) == 0 || (s[0] != ' ' && s[0] != '\t') {
			return levelUntagged, s
		}
		s = s[1:]
		tag := s
		if i := bytes.IndexAny(s, " \t"); i >= 0 {
			tag = s[:i]
		}
		lvl, known, replay := levelOf(tag)
		if !known {
			return levelUntagged, s
		}
		s = s[len(tag):]
		if len(s) > 0 {
			s = s[1:] // the one separator after the level
		}
		if !replay {
			return lvl, s
		}
		// A Write event: what follows may itself be a replayed daemon line.
	}
}

// splitBare handles a line that does not start with a timestamp.
//
// A cobra "Error:" line counts as an error, not a fatal: on v1.x it only
// reports a usage error, alone in the output, and on v2 it can repeat, after
// the fact, a failure already logged, which must keep its code.
func splitBare(s []byte) (logLevel, []byte) {
	if bytes.HasPrefix(s, []byte("Error: ")) {
		return levelError, s[len("Error: "):]
	}
	for _, p := range [...]string{"panic: ", "fatal error: "} {
		if bytes.HasPrefix(s, []byte(p)) {
			return levelFatal, s[len(p):]
		}
	}
	return levelUntagged, s
}

// levelOf maps a level tag. replay is set for "???", whose remainder is
// examined again as a line.
func levelOf(tag []byte) (lvl logLevel, known, replay bool) {
	if len(tag) > len("DPANIC") {
		return 0, false, false
	}
	switch string(tag) { // the conversion does not allocate in a switch
	case "TRC", "DBG", "INF", "NTC", "DEBUG", "INFO":
		return levelQuiet, true, false
	case "WRN", "WARN", "NOTICE":
		return levelWarn, true, false
	case "ERR", "ERROR":
		return levelError, true, false
	case "FTL", "PNC", "FATAL", "PANIC", "DPANIC":
		return levelFatal, true, false
	case "???":
		return levelUntagged, true, true
	}
	return 0, false, false
}

// stampLen returns the length of a leading time.StampMilli timestamp
// ("Jan _2 15:04:05.000") or 0. It also takes a one-digit day after a single
// space and any number of fractional digits, as copied into documentation.
func stampLen(s []byte) int {
	if len(s) < 14 || !asciiUpper(s[0]) || !asciiLower(s[1]) || !asciiLower(s[2]) || s[3] != ' ' {
		return 0
	}
	i := 4
	if s[i] == ' ' {
		i++
	}
	d := i
	for i < len(s) && i-d < 2 && asciiDigit(s[i]) {
		i++
	}
	if i == d || i >= len(s) || s[i] != ' ' {
		return 0
	}
	i++
	// HH:MM:SS
	if len(s) < i+8 {
		return 0
	}
	t := s[i : i+8]
	if !asciiDigit(t[0]) || !asciiDigit(t[1]) || t[2] != ':' || !asciiDigit(t[3]) || !asciiDigit(t[4]) ||
		t[5] != ':' || !asciiDigit(t[6]) || !asciiDigit(t[7]) {
		return 0
	}
	i += 8
	if i < len(s) && s[i] == '.' && i+1 < len(s) && asciiDigit(s[i+1]) {
		i++
		for i < len(s) && asciiDigit(s[i]) {
			i++
		}
	}
	return i
}

func asciiUpper(b byte) bool { return 'A' <= b && b <= 'Z' }
func asciiLower(b byte) bool { return 'a' <= b && b <= 'z' }
func asciiDigit(b byte) bool { return '0' <= b && b <= '9' }

func asciiToLower(b byte) byte {
	if asciiUpper(b) {
		return b + ('a' - 'A')
	}
	return b
}

// hasPrefixFoldASCII reports whether s starts with prefix, ignoring ASCII case.
// prefix must be lower case.
func hasPrefixFoldASCII(s []byte, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		if asciiToLower(s[i]) != prefix[i] {
			return false
		}
	}
	return true
}

func hasANSIEscape(b []byte) bool { return bytes.IndexByte(b, 0x1b) >= 0 }
