package parse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"
	"unicode/utf16"
)

func utf16Bytes(s string, bigEndian bool) []byte {
	out := []byte{0xff, 0xfe}
	if bigEndian {
		out = []byte{0xfe, 0xff}
	}
	for _, u := range utf16.Encode([]rune(s)) {
		if bigEndian {
			out = append(out, byte(u>>8), byte(u))
		} else {
			out = append(out, byte(u), byte(u>>8))
		}
	}
	return out
}

func TestTextReader(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want string
		err  error
	}{
		{"plain", []byte("abc\r\nnext\n"), "abc\r\nnext\n", nil},
		{"UTF-8 mark", append([]byte{0xef, 0xbb, 0xbf}, "tok\n"...), "tok\n", nil},
		{"UTF-16 LE", utf16Bytes("tok\r\nline two\n", false), "tok\r\nline two\n", nil},
		{"UTF-16 BE", utf16Bytes("tok\n", true), "tok\n", nil},
		{"UTF-16, not ASCII", utf16Bytes("é😀x\n", false), "\uFFFD\uFFFDx\n", nil},
		{"UTF-16, odd", append(utf16Bytes("tok", false), 'x'), "tok", ErrOddUTF16},
		{"empty", nil, "", nil},
	} {
		got, err := io.ReadAll(NewTextReader(bufio.NewReader(bytes.NewReader(tc.in))))
		if string(got) != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("%s: %q, %v; want %q, %v", tc.name, got, err, tc.want, tc.err)
		}
	}
}

// A replacement that does not fit the caller's buffer comes in the next
// read.
func TestTextReaderSmallReads(t *testing.T) {
	r := NewTextReader(bufio.NewReader(bytes.NewReader(utf16Bytes("aéb\n", false))))
	var got []byte
	buf := make([]byte, 1)
	for {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
	}
	if string(got) != "a\uFFFDb\n" {
		t.Errorf("%q", got)
	}
}
