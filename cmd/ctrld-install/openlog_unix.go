//go:build unix

package main

import (
	"os"
	"syscall"
)

// openAppend opens the log for appending without following a symlink: a
// root process must not be led to append to a file somebody else chose.
func openAppend(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o640)
}
