package platform

import (
	"unsafe"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc/mgr"

	"github.com/Control-D-Inc/ctrld-install/internal/parse"
)

const ctrldName = "ctrld.exe"

// The service is checked with the service control manager, so there is no
// service file; the service logs to the event log, so there is no log file.
func defaults() Defaults {
	return Defaults{
		Home:  `C:\ControlD`,
		Ctrld: `C:\ControlD\ctrld.exe`,
	}
}

// Privileged reports whether the process runs with an elevated token; a
// member of Administrators without elevation cannot install services.
func Privileged() (bool, error) {
	return windows.GetCurrentProcessToken().IsElevated(), nil
}

// ServiceRegistered reports whether the service definition exists: with a
// service file given, that it is a regular file; otherwise that the service
// control manager knows a service named ctrld.
func ServiceRegistered(serviceFile string) bool {
	if serviceFile != "" {
		return regularFile(serviceFile)
	}
	m, err := mgr.Connect()
	if err != nil {
		return false
	}
	defer m.Disconnect()
	s, err := m.OpenService("ctrld")
	if err != nil {
		return false
	}
	s.Close()
	return true
}

// serviceManagerDefinition is the image path the service control manager
// keeps for ctrld. QueryServiceConfig is asked directly: mgr.Service.Config
// also asks QueryServiceConfig2 levels not every system answers.
func serviceManagerDefinition() (parse.Definition, bool) {
	m, err := mgr.Connect()
	if err != nil {
		return parse.Definition{}, false
	}
	defer m.Disconnect()
	s, err := m.OpenService("ctrld")
	if err != nil {
		return parse.Definition{}, false
	}
	defer s.Close()
	var need uint32
	_ = windows.QueryServiceConfig(s.Handle, nil, 0, &need)
	if need == 0 || need > 64<<10 {
		return parse.Definition{}, false
	}
	buf := make([]byte, need)
	cfg := (*windows.QUERY_SERVICE_CONFIG)(unsafe.Pointer(&buf[0]))
	if err := windows.QueryServiceConfig(s.Handle, cfg, need, &need); err != nil {
		return parse.Definition{}, false
	}
	d, err := parse.WindowsDefinition(windows.UTF16PtrToString(cfg.BinaryPathName))
	return d, err == nil
}
