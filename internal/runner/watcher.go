package runner

// The watcher exists so that nothing of ctrld outlives ctrld-install. It
// leads ctrld's process group, outside ctrld-install's own, so a SIGKILL of
// ctrld-install or of its whole group does not reach it; it learns that
// ctrld-install is gone while ctrld runs and ends the group (SIGTERM, the
// grace period, SIGKILL). Once ctrld has exited by itself it is told to
// stand down and exits, leaving the group to whatever a service manager
// started in it. It never sees ctrld's arguments or environment, so never
// the token. Windows needs none: a job object ends ctrld with ctrld-install.
//
// It is the POSIX shell running watcher.sh: a shell starts in a fraction of
// the time a Go program takes, and the watcher is started for every command
// that changes the device. Its argv[0] is watcherName and its process name
// the shell's: nothing that matches ctrld-install by name (`pkill -f
// ctrld-install`, `pkill ctrld-install`) reaches it.
const (
	watcherName  = "ctrld-watcher"
	watcherShell = "/bin/sh"
	// watcherPath is all the script needs: sleep.
	watcherPath = "PATH=/usr/bin:/bin"
)
