package install

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Sources are where the secret of a run may come from. Exactly one is
// used; reading happens inside the run's budget.
type Sources struct {
	Token, TokenFile       string
	TokenStdin             bool
	Resolver, ResolverFile string
	ResolverStdin          bool
	Stdin                  io.Reader
	Getenv                 func(string) string
	// Fallback is used when no source is given (--simulate).
	Fallback *Secret
}

// UsageError is a command-line mistake; its text never contains a value
// from the command line, which may be a misplaced token.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usagef(format string, a ...any) error { return &UsageError{fmt.Sprintf(format, a...)} }

// Check rejects a contradictory choice of sources before anything runs.
func (s Sources) Check() error {
	n := 0
	for _, given := range []bool{s.Token != "", s.TokenFile != "", s.TokenStdin, s.Resolver != "", s.ResolverFile != "", s.ResolverStdin} {
		if given {
			n++
		}
	}
	if n > 1 {
		return usagef("give only one of --token, --token-file, --token-stdin, --resolver, --resolver-file and --resolver-stdin")
	}
	if n == 0 && s.Getenv(TokenEnv) == "" && s.Fallback == nil {
		return usagef("no token given: use --token, --token-file, --token-stdin, --resolver, --resolver-file, --resolver-stdin or CTRLD_PROVISION_TOKEN")
	}
	return nil
}

// Read returns the secret, giving up when ctx is done: a FIFO with no
// writer or a standard input that never closes cannot hold the run.
func (s Sources) Read(ctx context.Context) (Secret, error) {
	switch {
	case s.Resolver != "":
		return validated(Resolver, "the resolver ID", s.Resolver)
	case s.ResolverFile != "":
		return fromReader(ctx, Resolver, "the resolver ID", "cannot read the resolver ID file", openFile(s.ResolverFile))
	case s.ResolverStdin:
		return fromReader(ctx, Resolver, "the resolver ID", "cannot read the resolver ID from standard input", stdin(s.Stdin))
	case s.Token != "":
		return validated(Token, "the token", s.Token)
	case s.TokenFile != "":
		return fromReader(ctx, Token, "the token", "cannot read the token file", openFile(s.TokenFile))
	case s.TokenStdin:
		return fromReader(ctx, Token, "the token", "cannot read the token from standard input", stdin(s.Stdin))
	}
	if t := s.Getenv(TokenEnv); t != "" {
		return validated(Token, "the token", t)
	}
	if s.Fallback != nil {
		return *s.Fallback, nil
	}
	return Secret{}, usagef("no token given")
}

// PINSource is where uninstall's deactivation PIN comes from; none is
// fine: ctrld says when it needs one.
type PINSource struct {
	File  string
	Stdin bool
	In    io.Reader
}

// Read returns the PIN secret, empty when none was given.
func (p PINSource) Read(ctx context.Context) (Secret, error) {
	var open func() (io.ReadCloser, error)
	switch {
	case p.File != "":
		open = openFile(p.File)
	case p.Stdin:
		open = stdin(p.In)
	default:
		return PIN(""), nil
	}
	s, err := fromReader(ctx, PIN, "the deactivation PIN", "cannot read the deactivation PIN", open)
	if err == nil && strings.Trim(s.value, "0123456789") != "" {
		return Secret{}, usagef("the deactivation PIN must be digits only")
	}
	return s, err
}

func openFile(path string) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return os.Open(path) }
}

func stdin(r io.Reader) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) { return io.NopCloser(r), nil }
}

func fromReader(ctx context.Context, mk func(string) Secret, what, cannot string, open func() (io.ReadCloser, error)) (Secret, error) {
	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	// The read runs apart so that the budget and signals can end the wait;
	// an open of a FIFO or a read that never returns is left behind and
	// ends with the process.
	go func() {
		rc, err := open()
		if err != nil {
			ch <- result{err: err}
			return
		}
		defer rc.Close()
		line, err := firstLine(rc)
		ch <- result{line, err}
	}()
	select {
	case <-ctx.Done():
		return Secret{}, ctx.Err()
	case res := <-ch:
		if res.err != nil {
			return Secret{}, usagef("%s", cannot)
		}
		return validated(mk, what, res.line)
	}
}

func validated(mk func(string) Secret, what, v string) (Secret, error) {
	if err := validSecret(v); err != nil {
		return Secret{}, usagef("%s %s", what, err.Error())
	}
	return mk(v), nil
}

// maxSecretLen bounds a token or resolver ID; Control D's are far shorter.
const maxSecretLen = 256

// validSecret accepts printable ASCII without spaces, not starting with a
// dash (ctrld would read it as a flag). The error never contains the value.
func validSecret(s string) error {
	switch {
	case s == "":
		return errors.New("is empty")
	case len(s) > maxSecretLen:
		return fmt.Errorf("is longer than %d characters", maxSecretLen)
	case s[0] == '-':
		return errors.New("starts with a dash")
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return errors.New("contains white space or control characters")
		}
	}
	return nil
}

// firstLine reads the first line, without its line ending, reading no more
// than a token could need.
func firstLine(r io.Reader) (string, error) {
	br := bufio.NewReaderSize(io.LimitReader(r, 4<<10), 4<<10)
	line, err := br.ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}
