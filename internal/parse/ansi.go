package parse

import "bytes"

// StripANSI returns line without ANSI escape sequences: CSI sequences
// (ESC [ params intermediates final) and any other two-byte ESC sequence.
// ctrld colours its lines even when piped, and replayed daemon lines keep
// their colours whatever the parent's NO_COLOR says.
//
// The result may share storage with line when line holds no escapes.
func StripANSI(line []byte) []byte {
	i := bytes.IndexByte(line, 0x1b)
	if i < 0 {
		return line
	}
	out := make([]byte, 0, len(line))
	out = append(out, line[:i]...)
	for i < len(line) {
		b := line[i]
		if b != 0x1b {
			out = append(out, b)
			i++
			continue
		}
		i++ // ESC
		if i >= len(line) {
			break
		}
		if line[i] != '[' {
			i++ // a two-byte escape such as ESC c
			continue
		}
		i++ // '['
		// Parameter bytes 0x30-0x3f, intermediate bytes 0x20-0x2f, one final byte 0x40-0x7e.
		for i < len(line) && line[i] >= 0x30 && line[i] <= 0x3f {
			i++
		}
		for i < len(line) && line[i] >= 0x20 && line[i] <= 0x2f {
			i++
		}
		if i < len(line) && line[i] >= 0x40 && line[i] <= 0x7e {
			i++
		}
	}
	return out
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
