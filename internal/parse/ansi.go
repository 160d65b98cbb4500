package parse

import "bytes"

// StripANSI returns line without ANSI escape sequences: CSI sequences
// (ESC [ params intermediates final) and any other two-byte ESC sequence.
// ctrld colours its lines even when piped, and replayed daemon lines keep
// their colours whatever the parent's NO_COLOR says.
//
// The result may share storage with line when line holds no escapes.
func StripANSI(line []byte) []byte {
	if bytes.IndexByte(line, 0x1b) < 0 {
		return line
	}
	return appendStripANSI(make([]byte, 0, len(line)), line)
}

// appendStripANSI appends src without ANSI escape sequences to dst. The
// classifier calls it with a reused buffer: replayed daemon lines always
// carry colours, and a long log must not cost an allocation per line.
func appendStripANSI(dst, src []byte) []byte {
	for i := 0; i < len(src); {
		j := bytes.IndexByte(src[i:], 0x1b)
		if j < 0 {
			return append(dst, src[i:]...)
		}
		dst = append(dst, src[i:i+j]...)
		i += j + 1 // ESC
		if i >= len(src) {
			break
		}
		if src[i] != '[' {
			i++ // a two-byte escape such as ESC c
			continue
		}
		i++ // '['
		for i < len(src) && src[i] >= 0x30 && src[i] <= 0x3f {
			i++
		}
		for i < len(src) && src[i] >= 0x20 && src[i] <= 0x2f {
			i++
		}
		if i < len(src) && src[i] >= 0x40 && src[i] <= 0x7e {
			i++
		}
	}
	return dst
}

// skipLeadingEscapes returns line after the escape sequences it starts
// with, by the same rules as appendStripANSI.
func skipLeadingEscapes(line []byte) []byte {
	for len(line) > 0 && line[0] == 0x1b {
		i := 1
		if i < len(line) && line[i] != '[' {
			line = line[i+1:]
			continue
		}
		i++ // '['
		for i < len(line) && line[i] >= 0x30 && line[i] <= 0x3f {
			i++
		}
		for i < len(line) && line[i] >= 0x20 && line[i] <= 0x2f {
			i++
		}
		if i < len(line) && line[i] >= 0x40 && line[i] <= 0x7e {
			i++
		}
		if i > len(line) {
			i = len(line)
		}
		line = line[i:]
	}
	return line
}

// TrimLineEnd removes trailing white space, including the CR of a CRLF line.
func TrimLineEnd(line []byte) []byte {
	n := len(line)
	for n > 0 {
		switch line[n-1] {
		case ' ', '\t', '\r', '\n', '\v', '\f':
			n--
			continue
		}
		break
	}
	return line[:n]
}
