//go:build windows

package record

import (
	"io/fs"
	"os"
)

// openRecord refuses a reparse point (a symlink or junction) before the
// open and checks after it that the file opened is the one examined, so a
// swap in between is caught. Windows has no FIFOs in the file system.
func openRecord(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, ErrInvalid
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	ofi, err := f.Stat()
	if err != nil || !os.SameFile(fi, ofi) {
		f.Close()
		return nil, ErrInvalid
	}
	return f, nil
}

// Ownership is not checked on Windows: the home's owner and ACL are
// (package home).
func ownedBy(fs.FileInfo, int) bool { return true }

// A directory cannot be synced on Windows; NTFS journals the rename.
func syncDirectory(string) {}
