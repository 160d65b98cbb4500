package install

import (
	"errors"
	"os"
)

// fileID is empty on Windows: there is no daemon log file to read there
// (the service writes to the event log), so no default names one.
type fileID struct{}

func identity(fi os.FileInfo) fileID { return fileID{} }

var errNotRegular = errors.New("not a regular file")

func openLog(path string) (*os.File, os.FileInfo, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, errNotRegular
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err = f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, errNotRegular
	}
	return f, fi, nil
}
