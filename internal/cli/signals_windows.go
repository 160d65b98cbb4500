package cli

import (
	"os"
	"syscall"
)

// stopSignals end a device command's run with INSTALLER_INTERRUPTED: Ctrl-C
// and Ctrl-Break, and the console's close, logoff and shutdown events, which
// Go delivers as SIGTERM.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}
