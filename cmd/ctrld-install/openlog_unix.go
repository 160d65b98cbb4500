//go:build unix

package main

import (
	"errors"
	"os"
	"syscall"
)

// openAppend opens the log for appending without following a symlink (a
// root process must not be led to append to a file somebody else chose) and
// without blocking on a FIFO; anything but a regular file is refused.
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
