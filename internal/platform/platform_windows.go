package platform

import (
	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc/mgr"
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
