package parse

import (
	"bufio"
	"errors"
	"io"
)

// ErrOddUTF16 is UTF-16 text that ends in half a code unit.
var ErrOddUTF16 = errors.New("is not whole UTF-16 text")

// replacement stands for every character of UTF-16 text that is not ASCII:
// U+FFFD, which no grammar here accepts and a secret's validation refuses.
var replacement = []byte("\uFFFD")

// NewTextReader reads the text in r the way Windows tools write it, by its
// byte order mark: UTF-8 with a mark (Notepad, PowerShell 7's -Encoding
// utf8BOM) has the mark dropped; UTF-16 LE or BE (PowerShell 5.1's > and
// Out-File) becomes UTF-8 with the line structure kept, ASCII as it is and
// every other character U+FFFD; anything else is read as it is. Secrets and
// fleet reports read files through this one decoder. A read returns as
// soon as a whole line is decoded, so a slow pipe is read as it comes.
func NewTextReader(r *bufio.Reader) io.Reader {
	bom, _ := r.Peek(3)
	switch {
	case len(bom) >= 3 && bom[0] == 0xef && bom[1] == 0xbb && bom[2] == 0xbf:
		_, _ = r.Discard(3)
	case len(bom) >= 2 && (bom[0] == 0xff && bom[1] == 0xfe || bom[0] == 0xfe && bom[1] == 0xff):
		_, _ = r.Discard(2)
		return &utf16Reader{r: r, bigEndian: bom[0] == 0xfe}
	}
	return r
}

type utf16Reader struct {
	r         *bufio.Reader
	bigEndian bool
	pending   []byte // the rest of a replacement that did not fit
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	n := copy(p, u.pending)
	u.pending = u.pending[n:]
	for n < len(p) {
		a, err := u.r.ReadByte()
		if err != nil {
			return n, endAfter(n, err)
		}
		b, err := u.r.ReadByte()
		if err == io.EOF {
			return n, ErrOddUTF16
		}
		if err != nil {
			return n, endAfter(n, err)
		}
		lo, hi := a, b
		if u.bigEndian {
			lo, hi = b, a
		}
		switch {
		case hi == 0 && lo < 0x80:
			p[n] = lo
			n++
		case hi >= 0xdc && hi <= 0xdf:
			// The second half of a surrogate pair: its first half
			// already stood for the character.
			continue
		default:
			c := copy(p[n:], replacement)
			u.pending = replacement[c:]
			n += c
		}
		if p[n-1] == '\n' && u.r.Buffered() < 2 {
			break
		}
	}
	return n, nil
}

func endAfter(n int, err error) error {
	if n > 0 && err == io.EOF {
		return nil
	}
	return err
}
