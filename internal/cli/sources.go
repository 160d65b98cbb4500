package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/Control-D-Inc/ctrld-install/internal/install"
	"github.com/Control-D-Inc/ctrld-install/internal/secret"
)

// Sources are where the secret of a run may come from, as the command
// line gives them. Exactly one is
// used; reading happens inside the run's budget (internal/secret).
type Sources struct {
	Token, TokenFile       string
	TokenStdin             bool
	Resolver, ResolverFile string
	ResolverStdin          bool
	Stdin                  io.Reader
	Getenv                 func(string) string
	// Fallback is used when no source is given (--simulate).
	Fallback *install.Secret
}

// UsageError is a command-line mistake; its text never contains a value
// from the command line, which may be a misplaced token.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef builds a UsageError from fixed words and registry values.
func Usagef(format string, a ...any) error { return &UsageError{fmt.Sprintf(format, a...)} }

// Check rejects a contradictory choice of sources before anything runs.
func (s Sources) Check() error {
	n := 0
	for _, given := range []bool{s.Token != "", s.TokenFile != "", s.TokenStdin, s.Resolver != "", s.ResolverFile != "", s.ResolverStdin} {
		if given {
			n++
		}
	}
	if n > 1 {
		return Usagef("give only one of --token, --token-file, --token-stdin, --resolver, --resolver-file and --resolver-stdin")
	}
	// None is fine until the plan needs one: a stopped service is
	// repaired without the token.
	return nil
}

func (s Sources) source() (secret.Source, func(string) install.Secret, bool) {
	switch {
	case s.Resolver != "":
		return secret.String(secret.Resolver, s.Resolver), install.Resolver, true
	case s.ResolverFile != "":
		return secret.File(secret.Resolver, s.ResolverFile), install.Resolver, true
	case s.ResolverStdin:
		return secret.Reader(secret.Resolver, s.Stdin), install.Resolver, true
	case s.Token != "":
		return secret.String(secret.Token, s.Token), install.Token, true
	case s.TokenFile != "":
		return secret.File(secret.Token, s.TokenFile), install.Token, true
	case s.TokenStdin:
		return secret.Reader(secret.Token, s.Stdin), install.Token, true
	}
	if t := s.Getenv(TokenEnv); t != "" {
		return secret.String(secret.Token, t), install.Token, true
	}
	return secret.Source{}, nil, false
}

// Read returns the secret, giving up when ctx is done: a FIFO with no
// writer or a standard input that never closes cannot hold the run.
func (s Sources) Read(ctx context.Context) (install.Secret, error) {
	src, mk, ok := s.source()
	if !ok {
		if s.Fallback != nil {
			return *s.Fallback, nil
		}
		return install.Secret{}, nil
	}
	v, err := secret.Read(ctx, src)
	if err != nil {
		return install.Secret{}, err
	}
	return mk(v), nil
}

// PINSource is where uninstall's deactivation PIN comes from; none is
// fine: ctrld says when it needs one.
type PINSource struct {
	File  string
	Stdin bool
	In    io.Reader
}

// Read returns the PIN secret, empty when none was given.
func (p PINSource) Read(ctx context.Context) (install.Secret, error) {
	var src secret.Source
	switch {
	case p.File != "":
		src = secret.File(secret.PIN, p.File)
	case p.Stdin:
		src = secret.Reader(secret.PIN, p.In)
	default:
		return install.PIN(""), nil
	}
	v, err := secret.Read(ctx, src)
	if err != nil {
		return install.Secret{}, err
	}
	return install.PIN(v), nil
}
