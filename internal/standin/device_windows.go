//go:build windows

package standin

import "fmt"

// The device model runs ctrld's SysV init script: it has no Windows form.
// On Windows the daemon (run) is the service in standin_windows.go.
func unsupported() int {
	fmt.Println("stand-in ctrld: no device model on Windows")
	return 1
}

func (d *Device) start(string, []string) int { return unsupported() }
func (d *Device) status() int                { return unsupported() }
func (d *Device) restart() int               { return unsupported() }
func (d *Device) uninstall() int             { return unsupported() }
