package parse

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

func FuzzClassifier(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "legacy", "*.log"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no captured outputs to seed from: %v", err)
	}
	captures, err := filepath.Glob(filepath.Join("testdata", "captures", "ctrld-*.txt"))
	if err != nil || len(captures) == 0 {
		f.Fatalf("no captures of released ctrld to seed from: %v", err)
	}
	for _, p := range append(files, captures...) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, r := range catalogueRows {
		f.Add([]byte(r.v1Line("Mar  4 20:56:16.100", true)))
		f.Add([]byte("Mar  4 20:56:46.020 ??? $$EXIT$$" + r.v1Line("Mar  4 20:56:16.100", false)))
		f.Add([]byte(r.v2Line()))
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Split(data, []byte("\n"))

		c := NewClassifier()
		for _, line := range lines {
			c.Line(line)
			if len(c.buf) != 0 || bytes.ContainsFunc(c.buf[:cap(c.buf)], func(r rune) bool { return r != 0 }) {
				t.Fatalf("scratch not zeroed after a line")
			}
			if cap(c.buf) > maxLegacyLine {
				t.Fatalf("scratch grew to %d bytes", cap(c.buf))
			}
			if got, want := appendStripANSI(nil, line), StripANSI(line); !bytes.Equal(got, want) {
				t.Fatalf("appendStripANSI(%q) = %q, StripANSI = %q", line, got, want)
			}
		}

		code, ok := c.Result()
		if ok {
			reg, found := codes.Lookup(code.Name)
			if !found || reg != code || code.IsOK() {
				t.Fatalf("result %+v is not a registered failure code", code)
			}
		} else if code != (codes.Code{}) {
			t.Fatalf("not-understood result carries a code: %+v", code)
		}

		// No retention: everything the classifier holds prints exactly as a
		// classifier built from its five enums alone, whose text is fixed
		// field and code names. Input bytes cannot hide in that.
		canonical := &Classifier{decisive: c.decisive, cause: c.cause, hint: c.hint, consequence: c.consequence, unknownFlag: c.unknownFlag}
		if got, want := fmt.Sprintf("%+v", c), fmt.Sprintf("%+v", canonical); got != want {
			t.Fatalf("classifier state %s differs from its verdicts %s", got, want)
		}

		// No aliasing: a caller reuses its line buffer, so the result must not
		// change when every line is overwritten right after Line returns.
		c2 := NewClassifier()
		for _, line := range lines {
			tmp := bytes.Clone(line)
			c2.Line(tmp)
			for i := range tmp {
				tmp[i] = 0xAA
			}
		}
		code2, ok2 := c2.Result()
		if ok2 != ok || code2.Name != code.Name {
			t.Fatalf("result depends on the caller's buffer after Line: %v/%q vs %v/%q", ok, code.Name, ok2, code2.Name)
		}

		// With own flags, only cobra's unknown-flag error can change the
		// result, and only to one of its two codes.
		c3 := NewClassifier()
		c3.SetOwnFlags("--cd-org", "--cd", "-x")
		for _, line := range lines {
			c3.Line(line)
		}
		code3, ok3 := c3.Result()
		found, own := c3.UnknownFlag()
		found2, _ := c.UnknownFlag()
		switch {
		case found != found2:
			t.Fatalf("own flags change whether an unknown flag was found")
		case ok3 == ok && code3.Name == code.Name:
		case found && own && code3.Name == codes.CtrldVersionUnsupported:
		case found && !own && code3.Name == codes.InstallerUsage:
		default:
			t.Fatalf("own flags turned %v/%q into %v/%q", ok, code.Name, ok3, code3.Name)
		}
		if ok && !c.Terminal() {
			t.Fatalf("code %q without a terminal failure", code.Name)
		}
	})
}
