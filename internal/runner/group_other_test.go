//go:build unix && !linux

package runner

import (
	"syscall"
	"testing"
)

// groupGone reports whether no process of group pgid is left. Without
// /proc a zombie still counts; its new parent, launchd or init, reaps it
// promptly.
func groupGone(_ *testing.T, pgid int) bool { return syscall.Kill(-pgid, 0) != nil }
