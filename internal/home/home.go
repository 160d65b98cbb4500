// Package home checks ctrld's home directory before ctrld-install writes
// anything there. ctrld-install runs as root and writes its lock, its
// outcome record and ctrld's child working directory there; ctrld reads its
// configuration from it. A home another user can replace or write into would
// let that user steer a root process, so it is refused instead.
package home

import (
	"errors"
	"io/fs"
	"os"
)

// Errors name the flag, never the path: the path came from the command
// line, and ctrld-install prints only fixed text.
var (
	ErrMissing    = errors.New("the home directory (--home) does not exist")
	ErrSymlink    = errors.New("the home directory (--home) is a symbolic link")
	ErrNotDir     = errors.New("the home directory (--home) is not a directory")
	ErrNotOwned   = errors.New("the home directory (--home) is not owned by " + ownerWords)
	ErrWritable   = errors.New("the home directory (--home) is writable by group or others")
	ErrUnreadable = errors.New("the home directory (--home) cannot be examined")
	ErrCreate     = errors.New("the home directory (--home) cannot be created")
)

// Checker checks a home against the owner it must have.
type Checker struct {
	// UID is the user that must own the home on Unix: root in production.
	// A --simulate run or a test as another user sets its own. Windows
	// ignores it: there the owner must be SYSTEM, Administrators or the
	// account the process runs as.
	UID int
}

// Default is what an install uses: the home belongs to root.
var Default = Checker{UID: 0}

// Prepare is Default.Prepare.
func Prepare(dir string) error { return Default.Prepare(dir) }

// Check refuses a home that is missing, a symbolic link, not a directory,
// owned by another user or writable by group or others. Only the last
// component is looked at: on macOS /etc itself is a symbolic link to
// /private/etc, and the parents of a home are the system's.
//
// The error is one of the package's sentinels, or wraps one with the
// operating system's cause behind errors.Unwrap.
func (c Checker) Check(dir string) error {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &causeError{ErrMissing, err}
	case err != nil:
		return &causeError{ErrUnreadable, err}
	case fi.Mode()&fs.ModeSymlink != 0 || isReparsePoint(fi):
		return ErrSymlink
	case !fi.IsDir():
		return ErrNotDir
	}
	return c.checkOwnerAndMode(dir, fi)
}

// Prepare creates a missing home, with the parents it lacks, then checks
// it. An existing home is only checked: changing the owner or mode of a
// directory someone else made would hide the problem instead of reporting
// it.
func (c Checker) Prepare(dir string) error {
	if _, err := os.Lstat(dir); err != nil {
		if err := mkdirAll(dir); err != nil {
			return &causeError{ErrCreate, err}
		}
	}
	return c.Check(dir)
}

// causeError is a sentinel with the cause that led to it. Its text is the
// sentinel's alone: the cause may carry the path.
type causeError struct {
	sentinel error
	cause    error
}

func (e *causeError) Error() string        { return e.sentinel.Error() }
func (e *causeError) Unwrap() []error      { return []error{e.sentinel, e.cause} }
func (e *causeError) Is(target error) bool { return target == e.sentinel }
