//go:build !darwin && !linux && !windows

package platform

const ctrldName = "ctrld"

// Current holds this platform's defaults: other Unix systems use ctrld's
// Linux paths with a SysV-style service definition.
var Current = Defaults{
	Home:        "/etc/controld",
	Ctrld:       "/usr/local/bin/ctrld",
	ServiceFile: "/etc/init.d/ctrld",
}
