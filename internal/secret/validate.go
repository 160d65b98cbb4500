package secret

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/Control-D-Inc/ctrld-install/internal/parse"
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
// without its line ending and trailing blanks, decoded by its byte order
// mark (parse.NewTextReader, the decoder summarize reads files with too).
// Without a mark the bytes are taken as they are, and validation rejects
// anything but ASCII, which is also what stands in for a UTF-16 file's
// other characters. Text after the first line feed is not looked at: an odd
// trailing byte there is no reason to refuse the line.
func decodeLine(b []byte) (string, error) {
	line, err := bufio.NewReader(parse.NewTextReader(bufio.NewReader(bytes.NewReader(b)))).ReadString('\n')
	switch {
	case errors.Is(err, parse.ErrOddUTF16):
		return "", decodeError(parse.ErrOddUTF16.Error())
	case err != nil && err != io.EOF:
		return "", decodeError("cannot be read")
	}
	line = strings.TrimSuffix(line, "\n")
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
