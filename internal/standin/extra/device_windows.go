//go:build windows

package extra

import (
	"fmt"

	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// The device model runs ctrld's SysV init script: it has no Windows form.
// On Windows the daemon (run) is the service in service_windows.go.
func unsupported() int {
	fmt.Println("stand-in ctrld: no device model on Windows")
	return 1
}

func (d *device) start(string, []string) int { return unsupported() }
func (d *device) status() int                { return unsupported() }
func (d *device) restart(bool) int           { return unsupported() }
func (d *device) uninstall(string) int       { return unsupported() }

// daemon is ctrld run: on Windows the service control manager's service.
func daemon(standin.Script, []string) int { return scmDaemon() }
