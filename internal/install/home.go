package install

import (
	"errors"
	"os"
)

// checkHome creates a missing home 0755 (it holds the record, which has no
// secret, so status works without root) and refuses one that is a link or
// that others may write to.
func checkHome(dir string) error {
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
