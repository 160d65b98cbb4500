package platform

const ctrldName = "ctrld"

// Current holds this platform's defaults.
var Current = Defaults{
	Home:        "/etc/controld",
	Ctrld:       "/usr/local/bin/ctrld",
	ServiceFile: "/etc/systemd/system/ctrld.service",
}
