//go:build unix

package extra

import (
	"errors"
	"syscall"
)

func pgid() int {
	g, _ := syscall.Getpgid(0)
	return g
}

// service is a Windows action: on Unix the tests play the service with
// files (NeedFile, WriteFiles) or the device model.
func service(string, string) error {
	return errors.New("the stand-in registers services on Windows only")
}
