//go:build windows

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// adminsSDDL is the ACL of a file made AdminsOnly: SYSTEM and
// Administrators, nothing inherited.
const adminsSDDL = "D:P(A;;FA;;;SY)(A;;FA;;;BA)"

// openFile opens with FILE_FLAG_OPEN_REPARSE_POINT unless following, so a
// symbolic link or junction is opened as itself and refused on its handle,
// and with every sharing mode: a reader must never stop the writer's
// rename over the file (os.Open denies FILE_SHARE_DELETE, and the record's
// atomic replace then fails while status reads it). Windows has no FIFOs in
// the file system, and a named pipe without a server fails at once.
func openFile(path string, flag int, perm fs.FileMode, follow, adminsOnly bool) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var access uint32
	switch {
	case flag&os.O_RDWR != 0:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	case flag&os.O_WRONLY != 0 && flag&os.O_APPEND != 0:
		access = windows.GENERIC_READ | windows.FILE_APPEND_DATA | windows.SYNCHRONIZE // LockFileEx needs GENERIC_READ
	case flag&os.O_WRONLY != 0:
		access = windows.GENERIC_WRITE
	default:
		access = windows.GENERIC_READ
	}
	if flag&os.O_APPEND != 0 && flag&os.O_RDWR != 0 {
		access = windows.GENERIC_READ | windows.FILE_APPEND_DATA | windows.SYNCHRONIZE
	}
	disposition := uint32(windows.OPEN_EXISTING)
	switch {
	case flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		disposition = windows.CREATE_NEW
	case flag&os.O_CREATE != 0:
		disposition = windows.OPEN_ALWAYS
	}
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL | windows.FILE_FLAG_BACKUP_SEMANTICS)
	if !follow {
		attrs |= windows.FILE_FLAG_OPEN_REPARSE_POINT
	}
	if flag&os.O_CREATE != 0 && perm&0o200 == 0 {
		attrs |= windows.FILE_ATTRIBUTE_READONLY
	}
	share := uint32(windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE)
	var sa *windows.SecurityAttributes
	if adminsOnly && flag&os.O_CREATE != 0 {
		sd, err := windows.SecurityDescriptorFromString(adminsSDDL)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		sa = &windows.SecurityAttributes{SecurityDescriptor: sd}
		sa.Length = uint32(unsafe.Sizeof(*sa))
	}
	h, err := windows.CreateFile(p, access, share, sa, disposition, attrs, 0)
	if err != nil {
		if errors.Is(err, windows.ERROR_FILE_EXISTS) {
			err = fs.ErrExist
		} else if errors.Is(err, windows.ERROR_PATH_NOT_FOUND) {
			err = fs.ErrNotExist
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if !follow && info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		windows.CloseHandle(h)
		return nil, &fs.PathError{Op: "open", Path: path, Err: ErrLink}
	}
	if info.FileAttributes&(windows.FILE_ATTRIBUTE_DIRECTORY|windows.FILE_ATTRIBUTE_DEVICE) != 0 {
		windows.CloseHandle(h)
		return nil, &fs.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return os.NewFile(uintptr(h), path), nil
}

// OpenDir opens a directory without following a reparse point.
func OpenDir(path string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	share := uint32(windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE)
	h, err := windows.CreateFile(p, windows.GENERIC_READ, share, nil, windows.OPEN_EXISTING,
		windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil ||
		info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 ||
		info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY == 0 {
		windows.CloseHandle(h)
		return nil, &fs.PathError{Op: "open", Path: path, Err: ErrLink}
	}
	return os.NewFile(uintptr(h), path), nil
}

// Ownership and mode bits are not checked on Windows: the home's owner and
// ACL are (package home), and Go makes mode bits up from the read-only
// attribute.
func ownedBy(fs.FileInfo, int) bool { return true }

func writableByOthers(fs.FileInfo) bool { return false }

func links(f *os.File, _ fs.FileInfo) uint64 {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		return 1
	}
	return uint64(info.NumberOfLinks)
}

// ID is a file's identity. It is empty on Windows, where no daemon log is
// read (the service writes to the event log).
type ID struct{}

// IDOf is fi's identity.
func IDOf(fs.FileInfo) ID { return ID{} }

// SyncDir does nothing on Windows: a directory cannot be synced there, and
// NTFS journals the rename.
func SyncDir(string) {}
