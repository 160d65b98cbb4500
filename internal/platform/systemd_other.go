//go:build !linux

package platform

// Systemd is systemd's view of ctrld's unit; only Linux has one.
type Systemd struct {
	Systemctl string
	Unit      string
}

// SystemdFor: no systemd here.
func SystemdFor(string) (Systemd, bool) { return Systemd{}, false }
