package platform

const ctrldName = "ctrld"

func defaults() Defaults {
	return Defaults{
		Home:        "/etc/controld",
		Ctrld:       "/usr/local/bin/ctrld",
		ServiceFile: "/Library/LaunchDaemons/ctrld.plist",
		// The launchd template of the service library ctrld uses.
		ServiceLogs: []string{"/usr/local/var/log/ctrld.out.log", "/usr/local/var/log/ctrld.err.log"},
	}
}
