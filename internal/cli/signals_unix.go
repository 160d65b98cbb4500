//go:build unix

package cli

import (
	"os"
	"syscall"
)

// stopSignals end a device command's run with INSTALLER_INTERRUPTED: SIGINT
// and SIGTERM; SIGHUP, which a manual run over ssh gets when the connection
// drops; and the signals Go would otherwise turn into a crash with a stack
// dump, no final line and a record left running, when another process
// sends them (kill -QUIT, -ABRT, -TRAP, -SYS, -ILL, -SEGV, -BUS, -FPE). The
// same signals raised by a fault in ctrld-install itself still crash it.
var stopSignals = []os.Signal{
	os.Interrupt, syscall.SIGTERM, syscall.SIGHUP,
	syscall.SIGQUIT, syscall.SIGABRT, syscall.SIGTRAP, syscall.SIGSYS,
	syscall.SIGILL, syscall.SIGSEGV, syscall.SIGBUS, syscall.SIGFPE,
}
