package secret

import (
	"strconv"
	"unicode/utf16"
)

// MaxLen bounds a token or resolver ID; Control D's are far shorter.
const MaxLen = 256

// maxPINLen admits leading zeros a person may type in front of a PIN that
// still fits ctrld's int64 flag.
const maxPINLen = 32

// Validate checks a token or resolver ID (printable ASCII without spaces,
// not starting with a dash, which ctrld would read as a flag, at most MaxLen
// characters) or a PIN (digits only, a number that fits in int64). The
// error is an *Error of KindInvalid and never contains v.
func Validate(n Name, v string) error {
	if reason := invalid(n, v); reason != "" {
		return &Error{Name: n, Kind: KindInvalid, reason: reason}
	}
	return nil
}

func invalid(n Name, v string) string {
	if v == "" {
		return "is empty"
	}
	if n == PIN {
		return invalidPIN(v)
	}
	switch {
	case len(v) > MaxLen:
		return "is longer than " + strconv.Itoa(MaxLen) + " characters"
	case v[0] == '-':
		return "starts with a dash"
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= 0x80:
			return "contains characters that are not ASCII"
		case c <= ' ' || c == 0x7f:
			return "contains white space or control characters"
		}
	}
	return ""
}

func invalidPIN(v string) string {
	if len(v) > maxPINLen {
		return "is longer than " + strconv.Itoa(maxPINLen) + " digits"
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return "contains characters other than digits"
		}
	}
	if _, err := strconv.ParseInt(v, 10, 64); err != nil {
		return "is too large a number"
	}
	return ""
}

// canonicalPIN drops leading zeros. ctrld reads --pin with pflag's int64,
// which parses base 0: "0123" would reach ctrld as octal 83 and "089" not at
// all. The PIN is a number to ctrld, so its decimal form is the same PIN.
func canonicalPIN(v string) string {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return v
	}
	return strconv.FormatInt(n, 10)
}

// lineEnd reports whether b holds a whole first line in the encoding its
// byte order mark announces, so reading can stop there: a writer that keeps
// standard input open after the line must not hold the run.
func lineEnd(b []byte) bool {
	switch {
	case hasUTF16LEBOM(b):
		for i := 2; i+1 < len(b); i += 2 {
			if b[i] == '\n' && b[i+1] == 0 {
				return true
			}
		}
		return false
	case hasUTF16BEBOM(b):
		for i := 2; i+1 < len(b); i += 2 {
			if b[i] == 0 && b[i+1] == '\n' {
				return true
			}
		}
		return false
	}
	for _, c := range b {
		if c == '\n' {
			return true
		}
	}
	return false
}

func hasUTF16LEBOM(b []byte) bool { return len(b) >= 2 && b[0] == 0xff && b[1] == 0xfe }
func hasUTF16BEBOM(b []byte) bool { return len(b) >= 2 && b[0] == 0xfe && b[1] == 0xff }

type decodeError string

func (e decodeError) Error() string { return string(e) }

// decodeLine returns the first line of what a file or standard input gave,
// without its line ending and trailing blanks. Windows tools write text
// with a byte order mark: UTF-8 with one from Notepad and PowerShell 7's
// -Encoding utf8BOM, UTF-16 LE from PowerShell 5.1's > and Out-File. Without
// a mark the bytes are taken as they are, and validation rejects anything
// but ASCII.
func decodeLine(b []byte) (string, error) {
	var line string
	switch {
	case len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf:
		line = firstLine(string(b[3:]))
	case hasUTF16LEBOM(b), hasUTF16BEBOM(b):
		s, err := decodeUTF16(b)
		if err != nil {
			return "", err
		}
		line = firstLine(s)
	default:
		line = firstLine(string(b))
	}
	for len(line) > 0 {
		switch line[len(line)-1] {
		case ' ', '\t', '\r':
			line = line[:len(line)-1]
			continue
		}
		break
	}
	return line, nil
}

func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}

// decodeUTF16 decodes up to the first line feed. Text after it is not
// looked at: an odd trailing byte there is no reason to refuse the line.
func decodeUTF16(b []byte) (string, error) {
	le := hasUTF16LEBOM(b)
	var units []uint16
	for i := 2; i+1 < len(b); i += 2 {
		u := uint16(b[i])<<8 | uint16(b[i+1])
		if le {
			u = uint16(b[i+1])<<8 | uint16(b[i])
		}
		if u == '\n' {
			return string(utf16.Decode(units)), nil
		}
		units = append(units, u)
	}
	if len(b)%2 != 0 {
		return "", decodeError("is not whole UTF-16 text")
	}
	return string(utf16.Decode(units)), nil
}
