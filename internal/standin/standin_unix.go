//go:build unix

package standin

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

func pgid() int {
	g, _ := syscall.Getpgid(0)
	return g
}

func signalPIDFile(path, sig string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return
	}
	signalPID(pid, sig)
}

func signalPID(pid int, sig string) {
	s := syscall.SIGTERM
	if sig == "INT" {
		s = syscall.SIGINT
	}
	_ = syscall.Kill(pid, s)
}

// service is a Windows action: on Unix the tests play the service with
// files (NeedFile, WriteFiles).
func service(string, string) error {
	return errors.New("the stand-in registers services on Windows only")
}
