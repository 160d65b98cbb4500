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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	p := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(p, body, 0o600))
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
			require.NoError(t, err)
			assert.Equal(t, canary, v)
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
			require.Error(t, err)
			assert.Empty(t, v)
			assert.Equal(t, tc.want, err.Error())
			assert.ErrorIs(t, err, ErrInvalid)
			assert.NotErrorIs(t, err, ErrUnreadable)
			assert.NotErrorIs(t, err, ErrTimeout)
			assert.NotContains(t, err.Error(), canary)
			var e *Error
			require.ErrorAs(t, err, &e)
			assert.Equal(t, KindInvalid, e.Kind)
		})
	}
}

func TestValid(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"a", canary, strings.Repeat("x", 256), "a-b_c.d/e+f=g~!", "12345"} {
		assert.NoError(t, Validate(Token, v), v)
		got, err := Read(context.Background(), String(Resolver, v))
		require.NoError(t, err)
		assert.Equal(t, v, got)
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
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	got, err := Read(context.Background(), File(PIN, writeFile(t, utf16LE("0042\r\n"))))
	require.NoError(t, err)
	assert.Equal(t, "42", got)
}

func TestUnreadableFile(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), canary)
	_, err := Read(context.Background(), File(Token, missing))
	assert.ErrorIs(t, err, ErrUnreadable)
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.Equal(t, "the token file cannot be read", err.Error())
	assert.NotContains(t, err.Error(), canary)

	dir := filepath.Join(t.TempDir(), canary)
	require.NoError(t, os.Mkdir(dir, 0o700))
	_, err = Read(context.Background(), File(PIN, dir))
	assert.ErrorIs(t, err, ErrUnreadable)
	assert.Equal(t, "the deactivation PIN file is a directory", err.Error())
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New(canary) }

func TestUnreadableStdin(t *testing.T) {
	t.Parallel()
	_, err := Read(context.Background(), Reader(Token, failingReader{}))
	assert.ErrorIs(t, err, ErrUnreadable)
	assert.Equal(t, "the token cannot be read from standard input", err.Error())
}

func TestStdinFirstLine(t *testing.T) {
	t.Parallel()
	v, err := Read(context.Background(), Reader(Token, strings.NewReader(canary+"\r\nrest")))
	require.NoError(t, err)
	assert.Equal(t, canary, v)
	v, err = Read(context.Background(), Reader(Token, strings.NewReader(canary)))
	require.NoError(t, err, "end of input ends the line")
	assert.Equal(t, canary, v)
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
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(); w.Close() })
	_, err = w.WriteString(canary + "\n")
	require.NoError(t, err)
	waitOrFail(t, 5*time.Second, func() {
		v, err := Read(context.Background(), Reader(Token, r))
		assert.NoError(t, err)
		assert.Equal(t, canary, v)
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
			require.NoError(t, err)
			t.Cleanup(func() { w.Close(); r.Close() })
			ctx, cancel := tc.ctx()
			defer cancel()
			waitOrFail(t, 5*time.Second, func() {
				_, err := Read(ctx, Reader(Token, r))
				assert.ErrorIs(t, err, ErrTimeout)
				assert.ErrorIs(t, err, tc.cause)
				assert.NotErrorIs(t, err, ErrInvalid)
				assert.EqualError(t, err, tc.phrase)
			})
		})
	}
}

func TestStdinEndsWithoutAnything(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	w.Close()
	_, err = Read(context.Background(), Reader(Token, r))
	assert.ErrorIs(t, err, ErrInvalid, "a closed, empty standard input is an empty token")
}

func TestDoneContextReadsNothing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Read(ctx, Reader(Token, strings.NewReader(canary+"\n")))
	assert.ErrorIs(t, err, ErrTimeout)
	assert.ErrorIs(t, err, context.Canceled)
}

var _ io.Reader = failingReader{}
