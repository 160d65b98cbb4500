//go:build windows

package support

import (
	"io/fs"
	"os"
)

// openRegular opens a file met during a walk. The walk has already skipped
// reparse points (links, junctions), which are not regular for WalkDir.
func openRegular(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrInvalid}
	}
	return f, nil
}

// openNamed opens a file named on the command line; only a regular file is
// kept.
func openNamed(path string) (*os.File, error) { return openRegular(path) }
