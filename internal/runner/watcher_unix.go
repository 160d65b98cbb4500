//go:build unix

package runner

import (
	_ "embed"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

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

//go:embed watcher.sh
var watcherScript string

// watcherCommand is watcher.sh without its comments and blank lines: the
// script is the watcher's argv, which ps shows and pkill -f matches.
var watcherCommand = func() string {
	var b strings.Builder
	for _, l := range strings.Split(watcherScript, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}()

// readyTimeout bounds the wait for a watcher to say it is in place. A
// watcher that is not ready by then is ended and the run goes on without.
const readyTimeout = 2 * time.Second

// ready is the byte a watcher writes once it watches.
const ready = 'R'

// What ctrld-install writes on the watcher's stdin, a line each.
const (
	msgArm   = "G" // followed by the grace period in seconds: ctrld is joining the group
	msgStand = "D" // ctrld exited by itself: exit, and leave the group alone
)

// watcher is the parent's side of a running watcher.
type watcher struct {
	cmd *exec.Cmd
	// life is the write end of the watcher's stdin: the messages above, and
	// the end of ctrld-install. The kernel closes it when ctrld-install
	// ends, however it ends, and the watcher reads EOF. It is close-on-exec
	// and ctrld-install holds the only copy, so neither ctrld nor anything
	// else holds it open.
	life *os.File
	once sync.Once
}

// startWatcher starts shell running watcher.sh, leading a new process
// group, and waits until it watches, at most wait. It returns nil when that
// fails.
//
// The watcher is started before ctrld and ctrld joins its group, rather than
// the other way round, so ctrld never runs for a moment without one, and the
// group's ID stays reserved by the watcher after ctrld has been reaped. The
// watcher does not start ctrld itself: ctrld's argv, with the token, never
// passes through it, and ctrld stays ctrld-install's child, whose exit
// status and output pipe os/exec handles as for any child.
func startWatcher(shell string, wait time.Duration) *watcher {
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		lifeR.Close()
		lifeW.Close()
		return nil
	}
	cmd := &exec.Cmd{
		Path: shell,
		Args: []string{watcherName, "-c", watcherCommand},
		// Nothing of the caller's: no ENV or BASH_ENV for the shell to
		// read, and a PATH of system directories for sleep.
		Env:    []string{watcherPath},
		Dir:    "/", // hold no directory busy
		Stdin:  lifeR,
		Stdout: readyW,
		// The watcher leads a new group: outside ctrld-install's, so a kill
		// of that group spares it; and ctrld's, since ctrld joins it.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	err = cmd.Start()
	lifeR.Close()
	readyW.Close()
	if err != nil {
		lifeW.Close()
		readyR.Close()
		return nil
	}
	w := &watcher{cmd: cmd, life: lifeW}
	// The ready pipe is read once, with its own deadline, and closed: no
	// deadline or descriptor of it outlives this call.
	var b [1]byte
	_ = readyR.SetReadDeadline(time.Now().Add(wait))
	n, _ := readyR.Read(b[:])
	readyR.Close()
	if n != 1 || b[0] != ready {
		_ = cmd.Process.Kill()
		w.reap()
		return nil
	}
	return w
}

func (w *watcher) pid() int { return w.cmd.Process.Pid }

// arm tells the watcher that ctrld is about to join its group, and the
// grace period to give the group should ctrld-install die.
func (w *watcher) arm(grace time.Duration) {
	_, _ = w.life.WriteString(msgArm + strconv.FormatFloat(grace.Seconds(), 'f', -1, 64) + "\n")
}

// standDown tells the watcher to leave the group alone and exit.
func (w *watcher) standDown() {
	w.once.Do(func() {
		_, _ = w.life.WriteString(msgStand + "\n")
		w.life.Close()
	})
}

// killed is called once the group's SIGKILL has ended the watcher.
func (w *watcher) killed() { w.once.Do(func() { w.life.Close() }) }

// reap waits for the watcher, which has exited or been killed.
func (w *watcher) reap() {
	_ = w.cmd.Wait()
	w.once.Do(func() { w.life.Close() })
}
