//go:build unix && !linux

package runner

import (
	"os/exec"
	"syscall"
)

// parentDeathKills: nothing in these kernels ends ctrld with ctrld-install,
// so every command is watched.
const parentDeathKills = false

func setParentDeathSignal(*syscall.SysProcAttr) {}

// awaitExit has nothing to do: every group here is led by a watcher, which
// keeps its ID reserved until finish reaps it.
func awaitExit(*group, *exec.Cmd) {}
