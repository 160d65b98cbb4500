//go:build unix

package simulate

import "syscall"

func interruptParent() { _ = syscall.Kill(syscall.Getppid(), syscall.SIGTERM) }
