package report

import (
	"errors"
	"io/fs"
	"os"
)

// openAppend refuses a log that is a reparse point (a symbolic link or a
// junction a standard user planted), and one swapped in between the check
// and the open.
func openAppend(path string) (*os.File, error) {
	before, err := os.Lstat(path)
	if err == nil && !before.Mode().IsRegular() {
		return nil, errors.New("the log is not a regular file")
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, err
	}
	after, err := os.Lstat(path)
	fi, ferr := f.Stat()
	if err != nil || ferr != nil || !after.Mode().IsRegular() || !os.SameFile(after, fi) {
		f.Close()
		return nil, errors.New("the log is not a regular file")
	}
	return f, nil
}
