package platform

import "os"

const ctrldName = "ctrld"

// defaults follow the init system ctrld registers its service with: the
// systemd unit where systemd runs, else the SysV script, whose daemon
// writes its output to /var/log (under systemd it goes to the journal,
// which is not read).
func defaults() Defaults {
	fi, err := os.Stat("/run/systemd/system")
	return linuxDefaults(err == nil && fi.IsDir())
}

// linuxDefaults are the defaults with or without systemd running.
func linuxDefaults(systemd bool) Defaults {
	d := Defaults{Home: "/etc/controld", Ctrld: "/usr/local/bin/ctrld"}
	if systemd {
		d.ServiceFile = "/etc/systemd/system/ctrld.service"
		d.ServicePIDFiles = []string{
			"/sys/fs/cgroup/system.slice/ctrld.service/cgroup.procs",         // cgroup v2
			"/sys/fs/cgroup/systemd/system.slice/ctrld.service/cgroup.procs", // v1
		}
		return d
	}
	d.ServiceFile = "/etc/init.d/ctrld"
	d.ServiceLogs = []string{"/var/log/ctrld.log", "/var/log/ctrld.err"}
	return d
}
