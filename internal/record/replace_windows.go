package record

import (
	"errors"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/windows"
)

// replaceFile renames from over to, both in one directory, while readers
// may hold to open. Readers share delete (package safefile), which lets
// POSIX rename semantics replace the file under them on NTFS since Windows
// 10 1709; os.Root.Rename asks for those semantics, os.Rename (MoveFileEx)
// does not. Where they are missing (older Windows, FAT, Wine) a rename over
// an open file is refused with access denied however the reader shares it,
// and ReplaceFile, which opens the replaced file sharing delete itself,
// replaces it instead.
func replaceFile(from, to string) error {
	root, err := os.OpenRoot(filepath.Dir(to))
	if err != nil {
		return err
	}
	err = root.Rename(filepath.Base(from), filepath.Base(to))
	root.Close()
	if err == nil || !(errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)) {
		return err
	}
	if rerr := replaceOpen(to, from); rerr != nil {
		return errors.Join(err, rerr)
	}
	return nil
}

var procReplaceFileW = windows.NewLazySystemDLL("kernel32.dll").NewProc("ReplaceFileW")

// replaceOpen is ReplaceFileW with no backup. The replaced file keeps its
// own ACL and attributes, which for the record are the ones the home gave
// it; errors merging them are not failures.
func replaceOpen(replaced, replacement string) error {
	const (
		ignoreMergeErrors = 0x2 // REPLACEFILE_IGNORE_MERGE_ERRORS
		ignoreACLErrors   = 0x4 // REPLACEFILE_IGNORE_ACL_ERRORS
	)
	a, err := windows.UTF16PtrFromString(replaced)
	if err != nil {
		return err
	}
	b, err := windows.UTF16PtrFromString(replacement)
	if err != nil {
		return err
	}
	r, _, err := procReplaceFileW.Call(uintptr(unsafe.Pointer(a)), uintptr(unsafe.Pointer(b)), 0,
		ignoreMergeErrors|ignoreACLErrors, 0, 0)
	if r == 0 {
		return &os.LinkError{Op: "replace", Old: replacement, New: replaced, Err: err}
	}
	return nil
}
