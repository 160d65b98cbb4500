package runner

import (
	"os"
	"os/signal"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// parentDeathSignal is the watcher's Pdeathsig. Not SIGTERM, which the
// watcher ignores, nor SIGKILL, which would end the watcher and leave ctrld.
const parentDeathSignal = syscall.SIGUSR1

// watcherSysProcAttr asks the kernel to signal the watcher when its parent
// dies. Linux sends Pdeathsig when the *thread* that forked the watcher ends,
// and the Go runtime may end a thread (one a goroutine locked and never
// unlocked), so the signal only prompts the watcher to check its parent.
func watcherSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: parentDeathSignal}
}

// watchParent calls gone when the parent-death signal comes and the parent
// really is gone: the kernel reparents the watcher before it signals, and a
// thread's death leaves the parent's PID unchanged.
func watchParent(parent int, gone func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, parentDeathSignal)
	go func() {
		for range sig {
			if os.Getppid() != parent {
				gone()
				return
			}
		}
	}()
}

// nameWatcher sets the watcher's process name, which `pkill` and `killall`
// match without -f, to watcherName: it was ctrld-install's, from the
// executable's file name.
func nameWatcher() {
	b := append([]byte(watcherName), 0)
	_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0)
}
