// Package secret reads what ctrld is told to trust: the provisioning token,
// the resolver ID and the deactivation PIN. They come from a flag's value, an
// environment variable, a file or standard input.
//
// Reading is bounded and interruptible. An MDM script that points --token-file
// at a FIFO nobody writes, or pipes a command that never closes into
// --token-stdin, must not hold the run past its budget or a signal: Read
// returns when ctx is done.
//
// No error of this package contains the value, nor the path it came from:
// both are the caller's input, and ctrld-install prints only fixed text.
package secret

import (
	"context"
	"errors"
	"io"
)

// Name says which secret is read. It chooses the validation rule and the
// words of the error sentences.
type Name int

const (
	Token Name = iota
	Resolver
	PIN
)

func (n Name) noun() string {
	switch n {
	case Resolver:
		return "resolver ID"
	case PIN:
		return "deactivation PIN"
	}
	return "token"
}

type origin int

const (
	fromString origin = iota
	fromFile
	fromStdin
)

// Source is where one secret comes from. Build it with String, File, Stdin
// or Reader.
type Source struct {
	name   Name
	origin origin
	value  string
	path   string
	r      io.Reader
}

// String is a secret given as a value: a flag's argument or an environment
// variable. It is validated as given, with nothing trimmed: a shell already
// dropped what a file would carry (line endings, byte order marks).
func String(n Name, v string) Source { return Source{name: n, origin: fromString, value: v} }

// File is a secret in the first line of the file at path.
func File(n Name, path string) Source { return Source{name: n, origin: fromFile, path: path} }

// Reader is a secret in the first line of r, reported as standard input.
// Tests use it in place of os.Stdin.
func Reader(n Name, r io.Reader) Source { return Source{name: n, origin: fromStdin, r: r} }

// Read returns the secret from src once it is valid. A PIN comes back in
// its plain decimal form, without leading zeros.
//
// Errors are *Error values. errors.Is tells their kind: ErrInvalid (the
// value breaks the rules), ErrUnreadable (the file or standard input could
// not be read) or ErrTimeout (ctx was done before a line arrived; errors.Is
// with context.DeadlineExceeded or context.Canceled tells which).
//
// When standard input never delivers, the goroutine reading it stays blocked
// until the process exits: a read on a descriptor another process shares
// cannot be interrupted, and making it non-blocking would change the shared
// descriptor under the shell that owns it.
func Read(ctx context.Context, src Source) (string, error) {
	switch src.origin {
	case fromFile:
		b, err := readFile(ctx, src.path)
		if err != nil {
			return "", src.fail(err)
		}
		return src.fromLine(b)
	case fromStdin:
		b, err := readFirstLine(ctx, src.r, nil)
		if err != nil {
			return "", src.fail(err)
		}
		return src.fromLine(b)
	}
	return finish(src.name, src.value)
}

func (src Source) fromLine(b []byte) (string, error) {
	v, err := decodeLine(b)
	if err != nil {
		return "", &Error{Name: src.name, Kind: KindInvalid, reason: err.Error()}
	}
	return finish(src.name, v)
}

func finish(n Name, v string) (string, error) {
	if err := Validate(n, v); err != nil {
		return "", err
	}
	if n == PIN {
		return canonicalPIN(v), nil
	}
	return v, nil
}

// fail turns a reading error into the sentence for its origin.
func (src Source) fail(err error) error {
	e := &Error{Name: src.name, Kind: KindUnreadable, origin: src.origin, err: err}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		e.Kind = KindTimeout
	}
	return e
}

// Kind is the class of a failure, for the caller to map to its outcome.
type Kind int

const (
	KindInvalid Kind = iota + 1
	KindUnreadable
	KindTimeout
)

// Sentinels for errors.Is. Their text is generic; *Error says more.
var (
	ErrInvalid    = errors.New("the secret is not valid")
	ErrUnreadable = errors.New("the secret cannot be read")
	ErrTimeout    = errors.New("the secret did not arrive in time")
)

// Error is every error of Read and Validate. Its text is built from fixed
// words only.
type Error struct {
	Name   Name
	Kind   Kind
	origin origin
	reason string // fixed text, for KindInvalid
	err    error  // the cause, never printed: it may carry a path
}

func (e *Error) Error() string {
	noun := e.Name.noun()
	switch e.Kind {
	case KindInvalid:
		return "the " + noun + " " + e.reason
	case KindTimeout:
		interrupted := errors.Is(e.err, context.Canceled)
		switch {
		case e.origin == fromFile && interrupted:
			return "reading the " + noun + " file was interrupted"
		case e.origin == fromFile:
			return "the " + noun + " file gave no line before the time limit"
		case interrupted:
			return "reading the " + noun + " from standard input was interrupted"
		}
		return "standard input gave no " + noun + " before the time limit"
	}
	switch {
	case e.origin == fromFile && errors.Is(e.err, errNotAFile):
		return "the " + noun + " file is a directory or a socket, not a file"
	case e.origin == fromFile:
		return "the " + noun + " file cannot be read"
	}
	return "the " + noun + " cannot be read from standard input"
}

// Unwrap gives the cause: ctx's error for KindTimeout, the operating
// system's for KindUnreadable.
func (e *Error) Unwrap() error { return e.err }

// Is matches the sentinel of e's kind.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrInvalid:
		return e.Kind == KindInvalid
	case ErrUnreadable:
		return e.Kind == KindUnreadable
	case ErrTimeout:
		return e.Kind == KindTimeout
	}
	return false
}

var errNotAFile = errors.New("not a file")
