package platform

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The service file follows the init system ctrld registers with: a
// success on a SysV machine must not end SERVICE_NOT_REGISTERED because
// the systemd unit was looked for.
func TestLinuxDefaultsFollowTheInitSystem(t *testing.T) {
	sd := linuxDefaults(true)
	assert.Equal(t, "/etc/systemd/system/ctrld.service", sd.ServiceFile)
	assert.Empty(t, sd.ServiceLogs, "under systemd the daemon logs to the journal")

	sysv := linuxDefaults(false)
	assert.Equal(t, "/etc/init.d/ctrld", sysv.ServiceFile)
	assert.Equal(t, []string{"/var/log/ctrld.log", "/var/log/ctrld.err"}, sysv.ServiceLogs)
}

func TestRerootMovesEveryDefault(t *testing.T) {
	old := testRoot
	t.Cleanup(func() { testRoot = old })
	testRoot = "/tmp/root"
	d := reroot(linuxDefaults(false))
	assert.Equal(t, "/tmp/root/etc/controld", d.Home)
	assert.Equal(t, "/tmp/root/usr/local/bin/ctrld", d.Ctrld)
	assert.Equal(t, "/tmp/root/etc/init.d/ctrld", d.ServiceFile)
	assert.Equal(t, []string{"/tmp/root/var/log/ctrld.log", "/tmp/root/var/log/ctrld.err"}, d.ServiceLogs)
}
