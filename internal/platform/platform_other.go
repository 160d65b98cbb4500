//go:build !darwin && !linux && !windows

package platform

const ctrldName = "ctrld"

// Other Unix systems use ctrld's Linux paths with a SysV-style service
// definition.
func defaults() Defaults {
	return Defaults{
		Home:        "/etc/controld",
		Ctrld:       "/usr/local/bin/ctrld",
		ServiceFile: "/etc/init.d/ctrld",
		ServiceLogs: []string{"/var/log/ctrld.log", "/var/log/ctrld.err"},
	}
}
