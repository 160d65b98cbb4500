//go:build unix && !linux

package runner

import (
	"os"
	"time"
)

// pollInterval is how often a watcher without a kernel notice of its
// parent's death checks for it; the stdin pipe's EOF is the prompt notice.
const pollInterval = 500 * time.Millisecond

// pollParent calls gone once the watcher has been reparented, which happens
// when its parent dies.
func pollParent(parent int, gone func()) {
	for os.Getppid() == parent {
		time.Sleep(pollInterval)
	}
	gone()
}
