package runner

import (
	"os"
	"sync/atomic"
)

// The watcher is ctrld-install's own executable started again with these
// arguments and this environment variable. Both are required, so neither a
// stray variable nor a mistyped command line turns a run into a watcher.
// Its argv[0], and on Linux its process name, is watcherName: nothing that
// matches ctrld-install by name (`pkill -f ctrld-install`, `pkill
// ctrld-install`) reaches it.
const (
	watcherName = "ctrld-watcher"
	watcherArg  = "__watch-ctrld"
	watcherEnv  = "CTRLD_INSTALL_WATCHER"
)

// watcherHooked says that this program dispatches to WatcherMain, so Run
// may start this executable again as its watcher. A program that links the
// runner without the hook (another package's test binary, a benchmark) must
// never have itself started with watcher arguments it would not recognise.
var watcherHooked atomic.Bool

// IsWatcher reports whether this process was started as the runner's
// watcher; main then returns [WatcherMain]'s status at once:
//
//	if runner.IsWatcher() {
//		os.Exit(runner.WatcherMain())
//	}
//
// Calling it is also what lets [Run] use a watcher at all: Run starts one
// only in a program that has called IsWatcher.
//
// The watcher exists so that nothing of ctrld outlives ctrld-install. It
// leads ctrld's process group, outside ctrld-install's own, so a SIGKILL of
// ctrld-install or of its whole group does not reach it; it learns that
// ctrld-install is gone while ctrld runs and ends the group (SIGTERM, the
// grace period, SIGKILL). Once ctrld has exited by itself it is told to
// stand down and exits, leaving the group to whatever a service manager
// started in it. It never sees ctrld's arguments or environment, so never
// the token. Windows needs none: a job object ends ctrld with ctrld-install.
func IsWatcher() bool {
	watcherHooked.Store(true)
	return len(os.Args) == 3 && os.Args[1] == watcherArg && os.Getenv(watcherEnv) == "1"
}

// WatcherMain runs the watcher and returns its exit status. It returns when
// it is told to stand down, when ctrld-install is gone and ctrld's group has
// been ended, or at once on a command line that is not the runner's.
func WatcherMain() int {
	return watcherMain(os.Args[2:])
}
