package platform

import (
	"context"
	"path/filepath"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc/mgr"

	"github.com/Control-D-Inc/ctrld-install/internal/parse"
)

// servicePIDs asks the service control manager for the process of the
// running service ctrld.
func servicePIDs(context.Context) []int {
	m, err := mgr.Connect()
	if err != nil {
		return nil
	}
	defer m.Disconnect()
	s, err := m.OpenService("ctrld")
	if err != nil {
		return nil
	}
	defer s.Close()
	st, err := s.Query()
	if err != nil || st.ProcessId == 0 {
		return nil
	}
	return []int{int(st.ProcessId)}
}

// processRuns compares the image of process pid with the file at path,
// and when it started with when the file last changed: an installer that
// replaced the binary wrote it after the service started.
func processRuns(pid int, path string) parse.Same {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return parse.SameUnknown
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(h, 0, &buf[0], &n); err != nil {
		return parse.SameUnknown
	}
	if !samePath(windows.UTF16ToString(buf[:n]), path) {
		return parse.SameNo
	}
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return parse.SameUnknown
	}
	changed, ok := fileChanged(path)
	if !ok {
		return parse.SameNo
	}
	if changed.After(time.Unix(0, created.Nanoseconds())) {
		return parse.SameNo
	}
	return parse.SameYes
}

// fileChanged is the later of the file's creation and last write times: an
// installer makes a new file, and a copy over it writes it. The change
// time is not used: an attribute or an ACL set on the binary moves it, and
// each would cost a restart.
func fileChanged(path string) (time.Time, bool) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return time.Time{}, false
	}
	h, err := windows.CreateFile(p, windows.FILE_READ_ATTRIBUTES,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return time.Time{}, false
	}
	defer windows.CloseHandle(h)
	var info fileBasicInfo
	if err := windows.GetFileInformationByHandleEx(h, windows.FileBasicInfo, (*byte)(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		return time.Time{}, false
	}
	t := max(info.LastWriteTime, info.CreationTime)
	ft := windows.Filetime{LowDateTime: uint32(t), HighDateTime: uint32(t >> 32)}
	return time.Unix(0, ft.Nanoseconds()), true
}

// fileBasicInfo is FILE_BASIC_INFO; times are in 100 ns since 1601.
type fileBasicInfo struct {
	CreationTime, LastAccessTime, LastWriteTime, ChangeTime int64
	FileAttributes                                          uint32
	_                                                       uint32
}

// samePath compares two Windows paths as the file system does: without
// case, and with the \\?\ prefix QueryFullProcessImageName may give.
func samePath(a, b string) bool {
	strip := func(p string) string { return filepath.Clean(strings.TrimPrefix(p, `\\?\`)) }
	return strings.EqualFold(strip(a), strip(b))
}

// processExecutable: Windows shows no file of a running process's image.
func processExecutable(int) string { return "" }
