//go:build linux

package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/standin"
	"github.com/Control-D-Inc/ctrld-install/internal/standin/extra"
)

// How ctrld's group fares when ctrld exits by itself, is stopped, or
// outlives ctrld-install, with a daemon started in it the way ctrld's SysV
// init script starts one.

// daemon returns the PID file a stand-in's Daemon action writes, and
// kills that daemon when the test ends.
func daemon(t *testing.T) string {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "ctrld.pid")
	t.Cleanup(func() {
		if pid, ok := extra.Alive(pidFile); ok {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return pidFile
}

func waitDaemon(t *testing.T, pidFile string) int {
	t.Helper()
	var pid int
	if !waitFor(t, 5*time.Second, 10*time.Millisecond, func() bool {
		var ok bool
		pid, ok = extra.Alive(pidFile)
		return ok
	}) {
		t.Fatalf("no daemon running from %s after 5s", pidFile)
	}
	return pid
}

func pgidOf(t *testing.T, pid int) int {
	t.Helper()
	g, err := syscall.Getpgid(pid)
	if err != nil {
		t.Fatalf("getpgid(%d): %v", pid, err)
	}
	return g
}

// A ctrld start or restart that exits by itself leaves the daemon it
// started in its group running, whatever its exit status; the watcher
// stands down and is gone, and a restart replaces the daemon.
func TestDaemonInCtrldsGroupOutlivesANormalExit(t *testing.T) {
	t.Parallel()
	for _, exit := range []int{0, 1} {
		t.Run(fmt.Sprintf("exit %d", exit), func(t *testing.T) {
			t.Parallel()
			pidFile := daemon(t)
			rec := filepath.Join(t.TempDir(), "rec")
			fake := installScript(t, standin.Script{
				Start:   standin.Action{Record: rec, Daemon: pidFile, Stdout: []string{"Service started"}, Exit: exit},
				Restart: standin.Action{Daemon: pidFile},
			})
			res, err := Run(context.Background(), Command{Path: fake, Args: []string{"start", "--cd-org", testToken}, Dir: t.TempDir()})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.ExitCode != exit || res.TimedOut || res.Canceled {
				t.Errorf("Run = %+v, want exit %d, not stopped", res, exit)
			}
			pid := waitDaemon(t, pidFile)
			r := waitRecord(t, rec)
			if got := pgidOf(t, pid); got != r.Pgid {
				t.Errorf("the daemon's pgid = %d, want ctrld's %d: it stays in ctrld's group, as the SysV script leaves it", got, r.Pgid)
			}
			if r.Pgid == r.Pid {
				t.Errorf("ctrld led its own group %d, want the watcher's", r.Pgid)
			}
			assertWatcherReaped(t, r.Pgid)
			if got := liveMembers(t, r.Pgid); !slices.Equal(got, []int{pid}) {
				t.Errorf("group %d has live members %v, want only the daemon %d", r.Pgid, got, pid)
			}
			// A moment later, in case anything still meant to kill it.
			time.Sleep(200 * time.Millisecond)
			if _, ok := extra.Alive(pidFile); !ok {
				t.Fatalf("the daemon %d died after ctrld start exited by itself", pid)
			}

			res, err = Run(context.Background(), Command{Path: fake, Args: []string{"restart"}, Dir: t.TempDir()})
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("Run(restart) = %+v, %v; want exit 0", res, err)
			}
			if !waitFor(t, 2*time.Second, 10*time.Millisecond, func() bool { p, ok := extra.Alive(pidFile); return ok && p != pid }) {
				t.Fatalf("no new daemon after ctrld restart")
			}
			time.Sleep(200 * time.Millisecond)
			if _, ok := extra.Alive(pidFile); !ok {
				t.Errorf("the daemon ctrld restart started died after it exited by itself")
			}
		})
	}
}

// A stopped ctrld takes its whole group with it, the daemon included: the
// time limit, an interruption.
func TestDaemonDiesWithAStoppedCtrld(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"time limit", "cancel"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			pidFile := daemon(t)
			rec := filepath.Join(t.TempDir(), "rec")
			fake := install(t, standin.Action{Record: rec, Daemon: pidFile, Stdout: []string{"started"}, Hang: true})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if how == "time limit" {
				// Long enough for ctrld to start and start its daemon on a
				// loaded machine under -race (the watcher starts first).
				ctx, cancel = context.WithTimeout(ctx, 3*time.Second)
				defer cancel()
			}
			c := Command{Path: fake, Args: []string{"start"}, Dir: t.TempDir(), Grace: 500 * time.Millisecond}
			if how == "cancel" {
				var once sync.Once
				c.Line = func([]byte) { once.Do(func() { go cancel() }) }
			}
			res, err := Run(ctx, c)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if how == "time limit" && !res.TimedOut || how == "cancel" && !res.Canceled {
				t.Errorf("Run = %+v, want stopped by the %s", res, how)
			}
			r := waitRecord(t, rec)
			if !waitFor(t, 2*time.Second, 10*time.Millisecond, func() bool { return groupGone(t, r.Pgid) }) {
				t.Errorf("group %d has live members %v after ctrld was stopped, want none: the daemon in it too", r.Pgid, liveMembers(t, r.Pgid))
			}
			if pid, ok := extra.Alive(pidFile); ok {
				t.Errorf("the daemon %d outlived a stopped ctrld", pid)
			}
		})
	}
}

// A brief command starts nothing that may outlive it: its leftovers die
// when it exits.
func TestBriefCommandKillsItsLeftovers(t *testing.T) {
	t.Parallel()
	pidFile := daemon(t)
	rec := filepath.Join(t.TempDir(), "rec")
	fake := installScript(t, standin.Script{Status: standin.Action{Record: rec, Daemon: pidFile}})
	res, err := Run(context.Background(), Command{Path: fake, Args: []string{"status"}, Dir: t.TempDir(), Brief: true})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run = %+v, %v; want exit 0", res, err)
	}
	r := waitRecord(t, rec)
	if r.Pgid != r.Pid {
		t.Errorf("ctrld status's pgid = %d, want its pid %d: a brief command runs without a watcher on Linux", r.Pgid, r.Pid)
	}
	if !waitFor(t, 2*time.Second, 10*time.Millisecond, func() bool { return groupGone(t, r.Pgid) }) {
		t.Errorf("group %d has live members %v after a brief command, want none", r.Pgid, liveMembers(t, r.Pgid))
	}
}

// ctrld-install killed during a brief command: the kernel's parent-death
// signal ends ctrld at once, without a watcher.
func TestBriefCommandDiesWithCtrldInstall(t *testing.T) {
	t.Parallel()
	rec := filepath.Join(t.TempDir(), "rec")
	fake := installScript(t, standin.Script{Status: standin.Action{Record: rec, Hang: true, IgnoreTerm: true}})
	parent := startParent(t, fake, "brief")
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
	r := waitRecord(t, rec)
	t.Cleanup(func() { _ = syscall.Kill(-r.Pgid, syscall.SIGKILL) })
	if r.Pgid != r.Pid {
		t.Fatalf("ctrld status's pgid = %d, want its pid %d: no watcher", r.Pgid, r.Pid)
	}
	t0 := time.Now()
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if !waitFor(t, time.Second, 10*time.Millisecond, func() bool { return groupGone(t, r.Pgid) }) {
		t.Fatalf("ctrld status (pid %d) still runs 1s after ctrld-install was killed", r.Pid)
	}
	t.Logf("ctrld status gone %v after ctrld-install", time.Since(t0).Round(time.Millisecond))
}

// startParent makes the test binary a stand-in ctrld-install in mode (see
// modeEnv), in a process group of its own; the caller starts it.
func startParent(t *testing.T, fake, mode string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(self)
	parent.Env = append(os.Environ(), parentEnv+"="+fake, modeEnv+"="+mode, graceEnv+"=500ms")
	parent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return parent
}

// Progress comes every interval while ctrld runs, with the time since ctrld
// started, and never after Run returns.
func TestProgressWhileCtrldRuns(t *testing.T) {
	t.Parallel()
	const every = 50 * time.Millisecond
	fake := install(t, standin.Action{SleepMS: 330})
	var mu sync.Mutex
	var got []time.Duration
	c := Command{Path: fake, Args: []string{"start"}, Dir: t.TempDir(), ProgressEvery: every,
		Progress: func(el time.Duration) { mu.Lock(); got = append(got, el); mu.Unlock() }}
	t0 := time.Now()
	if _, err := Run(context.Background(), c); err != nil {
		t.Fatalf("Run: %v", err)
	}
	ran := time.Since(t0)
	mu.Lock()
	calls := slices.Clone(got)
	mu.Unlock()
	// At most one call per interval of the run, and at least the 330 ms
	// ctrld slept, less one for a late tick.
	if n := len(calls); n < 330/50-1 || time.Duration(n)*every > ran {
		t.Errorf("Progress was called %d times (%v) in a run of %v, want one every %v", n, calls, ran, every)
	}
	for i, el := range calls {
		if el%every != 0 || el < every || (i > 0 && el <= calls[i-1]) {
			t.Errorf("Progress elapsed %v, want increasing multiples of %v", calls, every)
			break
		}
	}
	time.Sleep(3 * every)
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(calls) {
		t.Errorf("Progress was called %d times after Run returned, want none", len(got)-len(calls))
	}
}

// assertWatcherIdentity checks that nothing matching ctrld-install by name
// reaches the watcher: neither its command line (`pkill -f`) nor its
// process name (`pkill`).
func assertWatcherIdentity(t *testing.T, pid int) {
	t.Helper()
	self := filepath.Base(os.Args[0])
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cmdline), self) || strings.Contains(string(cmdline), "ctrld-install") {
		t.Errorf("the watcher's command line %q holds the program's name: pkill -f would kill it", cmdline)
	}
	if !strings.HasPrefix(string(cmdline), watcherName+"\x00") {
		t.Errorf("the watcher's command line %q does not start with %q", cmdline, watcherName)
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(comm)); strings.Contains(got, self) || strings.Contains(got, "ctrld-install") {
		t.Errorf("the watcher's process name = %q: pkill would kill it", got)
	}
}

// A ctrld that exits but leaves a process holding stdout and stderr must not
// keep the run waiting longer than the grace period. A brief command's
// leftover is killed with ctrld's group; the leftover of a command that is
// not brief may be what a service manager started, and is left alive, its
// pipe closed.
func TestRunGrandchildHoldingPipes(t *testing.T) {
	t.Parallel()
	for _, brief := range []bool{false, true} {
		t.Run(fmt.Sprintf("brief=%v", brief), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			rec := filepath.Join(dir, "rec")
			fake := install(t, standin.Action{Record: rec, Grandchild: true, Stdout: []string{"bye"}, Exit: 0})
			// Long enough that a brief command, which does not wait for
			// the pipe, ends well inside it even with the race detector.
			const grace = 2 * time.Second
			t0 := time.Now()
			var lines []string
			res, err := Run(context.Background(), Command{Path: fake, Args: []string{"start"}, Dir: dir, Grace: grace, Line: collect(&lines), Brief: brief})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			el := time.Since(t0)
			r := waitRecord(t, rec)
			t.Cleanup(func() { _ = syscall.Kill(-r.Pgid, syscall.SIGKILL) })
			if bound := 5 * time.Second; el >= bound {
				t.Errorf("Run took %v, want less than %v", el, bound)
			}
			// Without brief, WaitDelay waited for the pipe. A brief command's
			// leftovers die as soon as ctrld exits, where ctrld is settled
			// before it is reaped; elsewhere WaitDelay comes first there too.
			if !brief || !parentDeathKills {
				if el < grace {
					t.Errorf("Run took %v, want at least %v: WaitDelay waited for the pipe", el, grace)
				}
			} else if el >= grace {
				t.Errorf("Run of a brief command took %v, want less than %v: its leftover is killed when it exits", el, grace)
			}
			if got, want := res.ExitCode, 0; got != want {
				t.Errorf("Run: ExitCode = %d, want %d", got, want)
			}
			if res.TimedOut || res.Canceled {
				t.Errorf("Run: TimedOut = %v, Canceled = %v, want false", res.TimedOut, res.Canceled)
			}
			if want := []string{"bye"}; !slices.Equal(lines, want) {
				t.Errorf("Run delivered lines %q, want %q", lines, want)
			}
			if brief {
				if !waitFor(t, 2*time.Second, 20*time.Millisecond, func() bool { return groupGone(t, r.Pgid) }) {
					t.Errorf("group %d still has live members after 2s: a brief command's leftovers must be killed", r.Pgid)
				}
				return
			}
			// ctrld exited by itself: the watcher stood down, was reaped,
			// and the grandchild is alone in the group.
			assertWatcherReaped(t, r.Pgid)
			if members := liveMembers(t, r.Pgid); len(members) != 1 {
				t.Errorf("group %d has live members %v after the run, want one: the grandchild", r.Pgid, members)
			}
		})
	}
}

// assertWatcherReaped checks that the watcher that stood down exits at once
// and is reaped, in the background, by its parent.
func assertWatcherReaped(t *testing.T, watcher int) {
	t.Helper()
	if !waitFor(t, 5*time.Second, 5*time.Millisecond, func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", watcher))
		return errors.Is(err, os.ErrNotExist)
	}) {
		t.Errorf("the watcher %d is still there (alive or unreaped) 5s after the run", watcher)
	}
}
