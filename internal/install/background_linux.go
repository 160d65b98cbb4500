package install

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// background gives the calling goroutine's thread the lowest CPU priority,
// for work that must not take the CPU from ctrld or from the run on a
// small machine: the token's fingerprint costs about as much CPU time as
// one ctrld command. The thread stays locked to the goroutine, so it ends
// with it and no other goroutine ever runs at that priority. It returns
// the thread's ID for hurry.
func background() int {
	runtime.LockOSThread()
	tid := unix.Gettid()
	_ = unix.Setpriority(unix.PRIO_PROCESS, tid, 19)
	return tid
}

// hurry gives the thread background lowered its normal priority back, once
// the run waits for its work: a busy machine must not keep the run waiting
// on it.
func hurry(tid int) {
	if tid > 0 {
		_ = unix.Setpriority(unix.PRIO_PROCESS, tid, 0)
	}
}
