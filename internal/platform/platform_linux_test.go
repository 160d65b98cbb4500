package platform

import (
	"slices"
	"testing"
)

// The service file follows the init system ctrld registers with: a
// success on a SysV machine must not end SERVICE_NOT_REGISTERED because
// the systemd unit was looked for.
func TestLinuxDefaultsFollowTheInitSystem(t *testing.T) {
	sd := linuxDefaults(true)
	if got, want := sd.ServiceFile, "/etc/systemd/system/ctrld.service"; got != want {
		t.Errorf("linuxDefaults(true).ServiceFile = %q, want %q", got, want)
	}
	if len(sd.ServiceLogs) != 0 {
		t.Errorf("linuxDefaults(true).ServiceLogs = %q, want none: under systemd the daemon logs to the journal", sd.ServiceLogs)
	}

	sysv := linuxDefaults(false)
	if got, want := sysv.ServiceFile, "/etc/init.d/ctrld"; got != want {
		t.Errorf("linuxDefaults(false).ServiceFile = %q, want %q", got, want)
	}
	if got, want := sysv.ServiceLogs, []string{"/var/log/ctrld.log", "/var/log/ctrld.err"}; !slices.Equal(got, want) {
		t.Errorf("linuxDefaults(false).ServiceLogs = %q, want %q", got, want)
	}
}

func TestRerootMovesEveryDefault(t *testing.T) {
	old := testRoot
	t.Cleanup(func() { testRoot = old })
	testRoot = "/tmp/root"
	d := reroot(linuxDefaults(false))
	if got, want := d.Home, "/tmp/root/etc/controld"; got != want {
		t.Errorf("reroot: Home = %q, want %q", got, want)
	}
	if got, want := d.Ctrld, "/tmp/root/usr/local/bin/ctrld"; got != want {
		t.Errorf("reroot: Ctrld = %q, want %q", got, want)
	}
	if got, want := d.ServiceFile, "/tmp/root/etc/init.d/ctrld"; got != want {
		t.Errorf("reroot: ServiceFile = %q, want %q", got, want)
	}
	if got, want := d.ServiceLogs, []string{"/tmp/root/var/log/ctrld.log", "/tmp/root/var/log/ctrld.err"}; !slices.Equal(got, want) {
		t.Errorf("reroot: ServiceLogs = %q, want %q", got, want)
	}
}
