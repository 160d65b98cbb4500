//go:build unix && !linux && !darwin

package runner

import "syscall"

func watcherSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// watchParent polls: these systems get no kernel notice here, and the
// stdin pipe's EOF remains the prompt one.
func watchParent(parent int, gone func()) { go pollParent(parent, gone) }

// nameWatcher cannot rename the process here: the name `pkill` matches
// without -f stays the executable's.
func nameWatcher() {}
