package secret

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

const canary = "CANARYTOKEN0123456789"

func utf16LE(s string) []byte {
	b := []byte{0xff, 0xfe}
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return b
}

func utf16BE(s string) []byte {
	b := []byte{0xfe, 0xff}
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u>>8), byte(u))
	}
	return b
}

func writeFile(t *testing.T, body []byte) string {
	t.Helper()
	p := filepath.Join(wine.TempDir(t), "token")
	if err := os.WriteFile(p, body, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFileEncodings(t *testing.T) {
	t.Parallel()
	for name, body := range map[string][]byte{
		"plain":                []byte(canary),
		"newline":              []byte(canary + "\n"),
		"crlf":                 []byte(canary + "\r\n"),
		"trailing blanks":      []byte(canary + " \t \r\n"),
		"second line ignored":  []byte(canary + "\nsecond line with spaces\n"),
		"utf-8 bom":            append([]byte{0xef, 0xbb, 0xbf}, canary+"\r\n"...),
		"powershell 5.1 >":     utf16LE(canary + "\r\n"),
		"utf-16 le no newline": utf16LE(canary),
		"utf-16 be":            utf16BE(canary + "\n"),
		"utf-16 odd tail":      append(utf16LE(canary+"\r\n"), 'x'),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			v, err := Read(context.Background(), File(Token, writeFile(t, body)))
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if v != canary {
				t.Errorf("Read = %q, want %q", v, canary)
			}
		})
	}
}

func TestInvalid(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		src  func(t *testing.T) Source
		want string
	}{
		{"empty string", func(*testing.T) Source { return String(Token, "") }, "the token is empty"},
		{"empty file", func(t *testing.T) Source { return File(Token, writeFile(t, nil)) }, "the token is empty"},
		{"blank line", func(t *testing.T) Source { return File(Resolver, writeFile(t, []byte(" \r\n"+canary))) }, "the resolver ID is empty"},
		{"bom only", func(t *testing.T) Source { return File(Token, writeFile(t, utf16LE("\r\n"))) }, "the token is empty"},
		{"dash", func(*testing.T) Source { return String(Token, "-"+canary) }, "the token starts with a dash"},
		{"inner space", func(*testing.T) Source { return String(Resolver, canary+" x") }, "the resolver ID contains white space or control characters"},
		{"leading space in a file", func(t *testing.T) Source { return File(Token, writeFile(t, []byte(" "+canary))) }, "the token contains white space or control characters"},
		{"trailing space in a value", func(*testing.T) Source { return String(Token, canary+" ") }, "the token contains white space or control characters"},
		{"nul", func(t *testing.T) Source { return File(Token, writeFile(t, []byte(canary+"\x00"))) }, "the token contains white space or control characters"},
		{"utf-16 without bom", func(t *testing.T) Source { return File(Token, writeFile(t, utf16LE(canary)[2:])) }, "the token contains white space or control characters"},
		{"utf-8", func(*testing.T) Source { return String(Token, canary+"é") }, "the token contains characters that are not ASCII"},
		{"utf-16 non-ascii", func(t *testing.T) Source { return File(Token, writeFile(t, utf16LE(canary+"é"))) }, "the token contains characters that are not ASCII"},
		{"utf-16 odd length", func(t *testing.T) Source { return File(Token, writeFile(t, utf16LE(canary)[:9])) }, "the token is not whole UTF-16 text"},
		{"utf-16 lone surrogate", func(t *testing.T) Source {
			return File(Token, writeFile(t, append(utf16LE(canary), 0x00, 0xd8)))
		}, "the token contains characters that are not ASCII"},
		{"257 characters", func(*testing.T) Source { return String(Token, strings.Repeat("a", 257)) }, "the token is longer than 256 characters"},
		{"4 KiB without a line end", func(t *testing.T) Source {
			return File(Token, writeFile(t, []byte(strings.Repeat(canary, 1000))))
		}, "the token is longer than 256 characters"},
		{"pin with letters", func(*testing.T) Source { return String(PIN, "12a4") }, "the deactivation PIN contains characters other than digits"},
		{"pin negative", func(*testing.T) Source { return String(PIN, "-1") }, "the deactivation PIN contains characters other than digits"},
		{"pin too large", func(*testing.T) Source { return String(PIN, "9223372036854775808") }, "the deactivation PIN is too large a number"},
		{"pin too long", func(*testing.T) Source { return String(PIN, strings.Repeat("0", 33)) }, "the deactivation PIN is longer than 32 digits"},
		{"pin empty", func(t *testing.T) Source { return File(PIN, writeFile(t, []byte("\n"))) }, "the deactivation PIN is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := Read(context.Background(), tc.src(t))
			if err == nil {
				t.Fatalf("Read = %q, nil; want error %q", v, tc.want)
			}
			if v != "" {
				t.Errorf("Read = %q with an error, want \"\"", v)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("Read error = %q, want %q", got, tc.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Read error %q is not ErrInvalid", err)
			}
			if errors.Is(err, ErrUnreadable) {
				t.Errorf("Read error %q is ErrUnreadable, want not", err)
			}
			if errors.Is(err, ErrTimeout) {
				t.Errorf("Read error %q is ErrTimeout, want not", err)
			}
			if strings.Contains(err.Error(), canary) {
				t.Errorf("Read error %q contains the secret", err)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Read error %q (%T) is not an *Error", err, err)
			}
			if e.Kind != KindInvalid {
				t.Errorf("Read error Kind = %v, want KindInvalid (%v)", e.Kind, KindInvalid)
			}
		})
	}
}

func TestValid(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"a", canary, strings.Repeat("x", 256), "a-b_c.d/e+f=g~!", "12345"} {
		if err := Validate(Token, v); err != nil {
			t.Errorf("Validate(Token, %q): %v", v, err)
		}
		got, err := Read(context.Background(), String(Resolver, v))
		if err != nil {
			t.Fatalf("Read(String(Resolver, %q)): %v", v, err)
		}
		if got != v {
			t.Errorf("Read(String(Resolver, %q)) = %q, want %q", v, got, v)
		}
	}
}

func TestPINComesBackDecimal(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"123456":              "123456",
		"0123":                "123",
		"0":                   "0",
		"0000":                "0",
		"9223372036854775807": "9223372036854775807",
	} {
		got, err := Read(context.Background(), String(PIN, in))
		if err != nil {
			t.Fatalf("Read(String(PIN, %q)): %v", in, err)
		}
		if got != want {
			t.Errorf("Read(String(PIN, %q)) = %q, want %q", in, got, want)
		}
	}
	got, err := Read(context.Background(), File(PIN, writeFile(t, utf16LE("0042\r\n"))))
	if err != nil {
		t.Fatalf("Read(File(PIN, UTF-16 \"0042\")): %v", err)
	}
	if want := "42"; got != want {
		t.Errorf("Read(File(PIN, UTF-16 \"0042\")) = %q, want %q", got, want)
	}
}

func TestUnreadableFile(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(wine.TempDir(t), canary)
	_, err := Read(context.Background(), File(Token, missing))
	if !errors.Is(err, ErrUnreadable) {
		t.Errorf("Read(missing file) error = %v, want ErrUnreadable", err)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read(missing file) error = %v, want fs.ErrNotExist", err)
	}
	if err == nil {
		t.Fatal("Read(missing file) succeeded")
	}
	if got, want := err.Error(), "the token file cannot be read"; got != want {
		t.Errorf("Read(missing file) error = %q, want %q", got, want)
	}
	if strings.Contains(err.Error(), canary) {
		t.Errorf("Read(missing file) error %q contains the secret", err)
	}

	dir := filepath.Join(wine.TempDir(t), canary)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err = Read(context.Background(), File(PIN, dir))
	if !errors.Is(err, ErrUnreadable) {
		t.Errorf("Read(directory) error = %v, want ErrUnreadable", err)
	}
	if err == nil {
		t.Fatal("Read(directory) succeeded")
	}
	if got, want := err.Error(), "the deactivation PIN file is a directory or a socket, not a file"; got != want {
		t.Errorf("Read(directory) error = %q, want %q", got, want)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New(canary) }

func TestUnreadableStdin(t *testing.T) {
	t.Parallel()
	_, err := Read(context.Background(), Reader(Token, failingReader{}))
	if !errors.Is(err, ErrUnreadable) {
		t.Errorf("Read(failing reader) error = %v, want ErrUnreadable", err)
	}
	if err == nil {
		t.Fatal("Read(failing reader) succeeded")
	}
	if got, want := err.Error(), "the token cannot be read from standard input"; got != want {
		t.Errorf("Read(failing reader) error = %q, want %q", got, want)
	}
}

func TestStdinFirstLine(t *testing.T) {
	t.Parallel()
	v, err := Read(context.Background(), Reader(Token, strings.NewReader(canary+"\r\nrest")))
	if err != nil {
		t.Fatalf("Read(two lines): %v", err)
	}
	if v != canary {
		t.Errorf("Read(two lines) = %q, want %q", v, canary)
	}
	v, err = Read(context.Background(), Reader(Token, strings.NewReader(canary)))
	if err != nil {
		t.Fatalf("Read(no line end): %v; end of input ends the line", err)
	}
	if v != canary {
		t.Errorf("Read(no line end) = %q, want %q", v, canary)
	}
}

// waitOrFail runs f and fails the test if it takes longer than limit: the
// point of these tests is that Read does not hang.
func waitOrFail(t *testing.T, limit time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatal("Read did not return")
	}
}

// A writer that sent its line and keeps the pipe open, as
// `(echo TOKEN; sleep 30) | ctrld-install --token-stdin` does.
func TestStdinLineWhileWriterStaysOpen(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	if _, err := w.WriteString(canary + "\n"); err != nil {
		t.Fatal(err)
	}
	waitOrFail(t, 5*time.Second, func() {
		v, err := Read(context.Background(), Reader(Token, r))
		if err != nil {
			t.Errorf("Read(pipe): %v", err)
		}
		if v != canary {
			t.Errorf("Read(pipe) = %q, want %q", v, canary)
		}
	})
}

// `sleep 30 | ctrld-install --token-stdin`: nothing arrives and the pipe
// stays open.
func TestStdinThatNeverCloses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		ctx    func() (context.Context, context.CancelFunc)
		cause  error
		phrase string
	}{
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 100*time.Millisecond)
		}, context.DeadlineExceeded, "standard input gave no token before the time limit"},
		{"signal", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled, "reading the token from standard input was interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Close(); r.Close() })
			ctx, cancel := tc.ctx()
			defer cancel()
			waitOrFail(t, 5*time.Second, func() {
				_, err := Read(ctx, Reader(Token, r))
				if !errors.Is(err, ErrTimeout) {
					t.Errorf("Read error = %v, want ErrTimeout", err)
				}
				if !errors.Is(err, tc.cause) {
					t.Errorf("Read error = %v, want %v", err, tc.cause)
				}
				if errors.Is(err, ErrInvalid) {
					t.Errorf("Read error %v is ErrInvalid, want not", err)
				}
				if err == nil || err.Error() != tc.phrase {
					t.Errorf("Read error = %v, want %q", err, tc.phrase)
				}
			})
		})
	}
}

func TestStdinEndsWithoutAnything(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w.Close()
	_, err = Read(context.Background(), Reader(Token, r))
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("Read(closed, empty pipe) error = %v, want ErrInvalid: a closed, empty standard input is an empty token", err)
	}
}

func TestDoneContextReadsNothing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Read(ctx, Reader(Token, strings.NewReader(canary+"\n")))
	if !errors.Is(err, ErrTimeout) {
		t.Errorf("Read(done context) error = %v, want ErrTimeout", err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Read(done context) error = %v, want context.Canceled", err)
	}
}

var _ io.Reader = failingReader{}
