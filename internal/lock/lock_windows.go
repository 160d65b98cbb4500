//go:build windows

package lock

import (
	"errors"
	"io/fs"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// lockSDDL gives a new lock file its own ACL: SYSTEM and Administrators
// only. Inheriting the home's would let Users open it, and so hold it.
const lockSDDL = "D:P(A;;FA;;;SY)(A;;FA;;;BA)"

// open opens a lock file without following a reparse point, and refuses
// one that is not a plain file. Ownership is not checked on Windows: the
// home's owner and ACL are (package home), and a file in a home only
// administrators can write was made by an administrator.
func (c Checker) open(path string, mode uint32, create bool) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	access := uint32(windows.GENERIC_READ)
	disposition := uint32(windows.OPEN_EXISTING)
	var sa *windows.SecurityAttributes
	if create {
		access |= windows.GENERIC_WRITE
		disposition = windows.OPEN_ALWAYS
		if mode == lockMode {
			sd, err := windows.SecurityDescriptorFromString(lockSDDL)
			if err != nil {
				return nil, err
			}
			sa = &windows.SecurityAttributes{SecurityDescriptor: sd}
			sa.Length = uint32(unsafe.Sizeof(*sa))
		}
	}
	h, err := windows.CreateFile(p, access,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, sa, disposition,
		windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return nil, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	const notPlain = windows.FILE_ATTRIBUTE_DIRECTORY | windows.FILE_ATTRIBUTE_REPARSE_POINT | windows.FILE_ATTRIBUTE_DEVICE
	if info.FileAttributes&notPlain != 0 {
		windows.CloseHandle(h)
		return nil, ErrUntrusted
	}
	return os.NewFile(uintptr(h), path), nil
}

func tryLock(f *os.File, exclusive bool) (bool, error) {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	var ol windows.Overlapped
	err := windows.LockFileEx(windows.Handle(f.Fd()), flags, 0, 1, 0, &ol)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return false, nil
	}
	return false, err
}

func unlock(f *os.File) {
	var ol windows.Overlapped
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}
