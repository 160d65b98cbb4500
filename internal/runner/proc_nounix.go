//go:build !unix

package runner

import "os/exec"

// Windows ends ctrld's tree with its job whichever way ctrld-install ends,
// and its services run outside that job: there is no watcher, nothing to wait for before the reap, and what is left of the job
// when ctrld exits is ended, brief or not.
const parentDeathKills = true

func killAfterExit(*group, bool) {}

func awaitExit(*group, *exec.Cmd) {}
