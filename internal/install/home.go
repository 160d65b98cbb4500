package install

import (
	"errors"
	"os"
)

// checkHome creates a missing home 0755 (it holds the record, which has no
// secret, so status works without root) and refuses one that is a link or
// that others may write to.
func checkHome(dir string) error {
	// Before MkdirAll: a dangling link makes it fail, and a home that
	// cannot be created only costs the run its lock and record, where a
	// link must be refused.
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return &UnsafeHomeError{Check: "is a symbolic link"}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return &UnsafeHomeError{Check: "is a symbolic link"}
	case !fi.IsDir():
		return errors.New("not a directory")
	case fi.Mode().Perm()&0o022 != 0:
		return &UnsafeHomeError{Check: "is writable by group or others"}
	}
	return checkHomeOwner(fi)
}
