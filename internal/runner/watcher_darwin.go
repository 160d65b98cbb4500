package runner

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"
)

func watcherSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// watchParent calls gone when kqueue reports the parent's exit
// (EVFILT_PROC, NOTE_EXIT), or, when kqueue cannot watch it, when polling
// finds the watcher reparented.
func watchParent(parent int, gone func()) {
	kq, err := unix.Kqueue()
	if err != nil {
		go pollParent(parent, gone)
		return
	}
	var ev unix.Kevent_t
	unix.SetKevent(&ev, parent, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev.Fflags = unix.NOTE_EXIT
	if _, err := unix.Kevent(kq, []unix.Kevent_t{ev}, nil, nil); err != nil {
		unix.Close(kq)
		if errors.Is(err, unix.ESRCH) { // already gone
			gone()
			return
		}
		go pollParent(parent, gone)
		return
	}
	go func() {
		defer unix.Close(kq)
		events := make([]unix.Kevent_t, 1)
		for {
			n, err := unix.Kevent(kq, nil, events, nil)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				pollParent(parent, gone)
				return
			}
			if n > 0 {
				gone()
				return
			}
		}
	}()
}

// nameWatcher cannot rename the process here: the name `pkill` matches
// without -f stays the executable's.
func nameWatcher() {}
