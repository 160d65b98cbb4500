//go:build linux

package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/lock"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// A run that gets the lock with too little of its budget left for a
// change and its rollback does not start ctrld over a healthy device: it
// ends CTRLD_TIMEOUT (retryable) having changed nothing, and its record
// does not say a provisioning was attempted.
func TestLateLockChangesNothingOnAHealthyDevice(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.script(standin.Script{Start: w.success(), Status: standin.Action{NeedFile: w.serviceFile}})
	w.assertSuccess(w.run("--token", canaryToken))
	starts := len(w.argv())

	// Another run holds the lock for most of this one's budget.
	held, err := lock.Acquire(context.Background(), w.home)
	require.NoError(t, err)
	p := startInstaller(t, nil, nil, w.worldArgs("--token", canaryToken, "--force", "--timeout", "12s")...)
	time.Sleep(7 * time.Second)
	held.Release()
	r := p.wait(t, 12*time.Second+time.Minute)

	w.assertFailure(r, codes.CtrldTimeout, "")
	assert.Contains(t, r.stderr, "too little of the time limit is left to change a healthy device")
	assert.Len(t, w.argv(), starts, "ctrld start ran over the healthy device")
	_, err = os.Stat(w.serviceFile)
	assert.NoError(t, err, "the service is gone")
	rec := w.record()
	assert.NotEqual(t, record.ProvisioningFailed, rec.Provisioning, "the record says a provisioning was attempted")
	assert.Empty(t, rec.Action)
	assert.False(t, strings.Contains(r.stdout, "running ctrld start"), r.stdout)
}
