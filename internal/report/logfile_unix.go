//go:build unix

package report

import (
	"errors"
	"os"
	"syscall"
)

// openAppend opens the log without following a link and without blocking
// on a FIFO planted in its place.
func openAppend(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o640)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, errors.New("the log is not a regular file")
	}
	return f, nil
}
