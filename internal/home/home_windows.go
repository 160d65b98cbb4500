//go:build windows

package home

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

const ownerWords = "SYSTEM or Administrators"

// isReparsePoint reports links Lstat does not call symbolic: junctions and
// mount points redirect a path just as well.
func isReparsePoint(fi fs.FileInfo) bool {
	if fi.Mode()&fs.ModeIrregular != 0 {
		return true
	}
	d, ok := fi.Sys().(*syscall.Win32FileAttributeData)
	return ok && d.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0
}

// Rights that let a holder change what is in the directory or who may.
const writeRights = windows.FILE_WRITE_DATA | // add a file
	0x4 | // FILE_APPEND_DATA: add a subdirectory
	0x10 | // FILE_WRITE_EA
	0x40 | // FILE_DELETE_CHILD
	0x100 | // FILE_WRITE_ATTRIBUTES
	windows.DELETE | windows.WRITE_DAC | windows.WRITE_OWNER |
	windows.GENERIC_WRITE | windows.GENERIC_ALL

// trustedInstaller is the service SID that owns Windows' own files.
const trustedInstaller = "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464"

// checkOwnerAndMode is the Windows reading of "owned by root and not
// writable by group or others": the owner is SYSTEM, Administrators or the
// account running ctrld-install, and no allow entry that applies to the
// directory itself grants a write right to anyone else. Deny entries are
// not weighed against allow entries; a directory they would save is
// refused, which errs on the safe side.
func (c Checker) checkOwnerAndMode(dir string, _ fs.FileInfo) error {
	sd, err := windows.GetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT,
		windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return &causeError{ErrUnreadable, err}
	}
	self, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return &causeError{ErrUnreadable, err}
	}
	owner, _, err := sd.Owner()
	if err != nil || owner == nil {
		return ErrNotOwned
	}
	if !owner.IsWellKnown(windows.WinLocalSystemSid) &&
		!owner.IsWellKnown(windows.WinBuiltinAdministratorsSid) &&
		!owner.Equals(self.User.Sid) {
		return ErrNotOwned
	}
	// No DACL, or a NULL one, grants everyone everything.
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		return ErrWritable
	}
	ti, _ := windows.StringToSid(trustedInstaller)
	for i := range uint32(dacl.AceCount) {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return &causeError{ErrUnreadable, err}
		}
		switch ace.Header.AceType {
		case windows.ACCESS_DENIED_ACE_TYPE:
			continue
		case windows.ACCESS_ALLOWED_ACE_TYPE:
		default:
			// Object and callback entries lay out their SID elsewhere;
			// they are not expected on a directory and not trusted.
			return ErrWritable
		}
		if ace.Header.AceFlags&windows.INHERIT_ONLY_ACE != 0 || ace.Mask&writeRights == 0 {
			continue
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		switch {
		case sid.IsWellKnown(windows.WinLocalSystemSid),
			sid.IsWellKnown(windows.WinBuiltinAdministratorsSid),
			sid.IsWellKnown(windows.WinCreatorOwnerRightsSid), // the owner, checked above
			sid.Equals(self.User.Sid),
			ti != nil && sid.Equals(ti):
			continue
		}
		return ErrWritable
	}
	return nil
}

// homeSDDL is the home's own ACL, not inherited: SYSTEM and Administrators
// have full control, Users may read and traverse (status runs as anyone).
// Inheriting instead would, under C:\, give Authenticated Users the right
// to modify it.
const homeSDDL = "D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)(A;OICI;0x1200a9;;;BU)"

// mkdirAll creates the missing parents as Windows would, then the home
// itself with homeSDDL.
func mkdirAll(dir string) error {
	dir = filepath.Clean(dir)
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	sd, err := windows.SecurityDescriptorFromString(homeSDDL)
	if err != nil {
		return err
	}
	sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return err
	}
	if err := windows.CreateDirectory(p, sa); err != nil && err != windows.ERROR_ALREADY_EXISTS {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	return nil
}
