//go:build linux

package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// The bound the runner promises: ctrld's group is gone this soon after
// ctrld-install, however ctrld-install ends.
const goneBound = 4 * time.Second

// ctrld-install killed outright, alone or with its whole process group (an
// RMM agent's own time limit): the watcher ends ctrld's group, a ctrld that
// ignores SIGTERM and a grandchild included, within the bound. Both cases
// have a short grace, to keep the package quick: the default grace, the
// bound's worst case, is the built binary's (cmd/ctrld-install's
// TestKilledInstallerLeavesNoCtrld).
func TestCtrldDiesWithCtrldInstall(t *testing.T) {
	t.Parallel()
	const grace = 500 * time.Millisecond
	for _, tc := range []struct {
		name       string
		wholeGroup bool
	}{{"SIGKILL", false}, {"SIGKILL of its group", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := filepath.Join(t.TempDir(), "rec")
			fake := install(t, standin.Action{Record: rec, Grandchild: true, Hang: true, IgnoreTerm: true})
			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			parent := exec.Command(self)
			parent.Env = append(os.Environ(), parentEnv+"="+fake, graceEnv+"="+grace.String())
			// As `setsid ctrld-install`: a group of its own for the kill.
			parent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			if err := parent.Start(); err != nil {
				t.Fatalf("starting the stand-in ctrld-install: %v", err)
			}
			t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })

			pgid := waitRecord(t, rec).Pgid
			t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
			if pgid == parent.Process.Pid {
				t.Fatalf("ctrld's pgid = ctrld-install's pid %d, want another", pgid)
			}
			// The watcher, ctrld and the grandchild.
			if !waitFor(t, 5*time.Second, 10*time.Millisecond, func() bool { return len(liveMembers(t, pgid)) == 3 }) {
				t.Fatalf("group %d has live members %v after 5s, want 3: the watcher, ctrld and the grandchild", pgid, liveMembers(t, pgid))
			}
			assertNoToken(t, pgid)

			target := parent.Process.Pid
			if tc.wholeGroup {
				target = -target
			}
			t0 := time.Now()
			if err := syscall.Kill(target, syscall.SIGKILL); err != nil {
				t.Fatalf("kill(%d, SIGKILL): %v", target, err)
			}
			_ = parent.Wait()
			if !waitFor(t, goneBound, 20*time.Millisecond, func() bool { return groupGone(t, pgid) }) {
				t.Errorf("group %d still has live members %v, %v after ctrld-install was killed, want none: ctrld's group must not outlive ctrld-install",
					pgid, liveMembers(t, pgid), goneBound)
			}
			t.Logf("ctrld's group gone %v after ctrld-install, grace %v", time.Since(t0).Round(time.Millisecond), grace)
		})
	}
}

// A run that ends normally leaves no watcher behind, and ctrld's group ID was
// the watcher's, not ctrld's own.
func TestWatcherEndsWithTheRun(t *testing.T) {
	t.Parallel()
	rec := filepath.Join(t.TempDir(), "rec")
	fake := install(t, standin.Action{Record: rec, SleepMS: 300, Exit: 3})
	done := make(chan Result, 1)
	go func() {
		res, _ := Run(context.Background(), Command{Path: fake, Args: []string{"start", "--cd-org", testToken}, Dir: t.TempDir()})
		done <- res
	}()
	r := waitRecord(t, rec)
	if r.Pid == r.Pgid {
		t.Errorf("ctrld's pgid = its pid %d, want another: ctrld joins the watcher's group", r.Pid)
	}
	assertNoToken(t, r.Pgid)
	res := <-done
	if got, want := res.ExitCode, 3; got != want {
		t.Errorf("Run: ExitCode = %d, want %d", got, want)
	}
	assertWatcherReaped(t, r.Pgid)
	if !groupGone(t, r.Pgid) {
		t.Errorf("group %d has live members %v after the run, want none", r.Pgid, liveMembers(t, r.Pgid))
	}
}

// Without a watcher (none could be started) ctrld leads its own group.
func TestRunWithoutWatcher(t *testing.T) {
	t.Parallel()
	rec := filepath.Join(t.TempDir(), "rec")
	fake := install(t, standin.Action{Record: rec, Exit: 4})
	res, err := run(context.Background(), Command{Path: fake, Args: []string{"start"}, Dir: t.TempDir()}, false)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if got, want := res.ExitCode, 4; got != want {
		t.Errorf("run: ExitCode = %d, want %d", got, want)
	}
	r := waitRecord(t, rec)
	if r.Pgid != r.Pid {
		t.Errorf("ctrld's pgid = %d, want its pid %d: without a watcher ctrld leads its own group", r.Pgid, r.Pid)
	}
}

// An executable that does not answer as a watcher makes no watcher: it
// exits, or says nothing in time, and is ended.
func TestStartWatcherFallsBack(t *testing.T) {
	t.Parallel()
	for _, exe := range []string{filepath.Join(bin, "fails"), filepath.Join(bin, "silent"), filepath.Join(bin, "missing")} {
		t0 := time.Now()
		w := startWatcher(exe, 200*time.Millisecond)
		if w != nil {
			t.Errorf("startWatcher(%s) made a watcher, want nil", exe)
		}
		if el := time.Since(t0); el >= time.Second {
			t.Errorf("startWatcher(%s) took %v, want less than %v", exe, el, time.Second)
		}
	}
}

// The script itself under each POSIX shell there is: an unarmed watcher
// exits at once when its parent goes; one told to stand down exits and
// leaves its group alone; an armed one whose pipe ends kills its group,
// after the grace period for a member that ignores SIGTERM.
func TestWatcherScriptUnderEachShell(t *testing.T) {
	t.Parallel()
	var shells []string
	seen := map[string]bool{}
	for _, sh := range []string{watcherShell, "/bin/dash", "/bin/bash", "/usr/bin/bash", "/bin/ksh", "/usr/bin/zsh"} {
		real, err := filepath.EvalSymlinks(sh)
		if err == nil && !seen[real] {
			seen[real] = true
			shells = append(shells, sh)
		}
	}
	const grace = 300 * time.Millisecond
	for _, sh := range shells {
		t.Run(filepath.Base(sh), func(t *testing.T) {
			t.Parallel()
			// A member of the watcher's group that ignores SIGTERM, as
			// ctrld's leftovers may.
			member := func(t *testing.T, w *watcher) *exec.Cmd {
				t.Helper()
				c := exec.Command("/bin/sh", "-c", "trap '' TERM; exec sleep 30")
				c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: w.pid()}
				if err := c.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
				if !waitFor(t, 5*time.Second, 2*time.Millisecond, func() bool { return ignoresTerm(c.Process.Pid) }) {
					t.Fatalf("the member %d never ignored SIGTERM", c.Process.Pid)
				}
				return c
			}
			ended := func(w *watcher, within time.Duration) bool {
				done := make(chan struct{})
				go func() { w.reap(); close(done) }()
				select {
				case <-done:
					return true
				case <-time.After(within):
					_ = w.cmd.Process.Kill()
					<-done
					return false
				}
			}

			w := startWatcher(sh, 2*time.Second)
			if w == nil {
				t.Fatalf("%s: no watcher", sh)
			}
			w.life.Close()
			if !ended(w, time.Second) {
				t.Errorf("%s: an unarmed watcher did not exit within 1s of its pipe's end", sh)
			}

			w = startWatcher(sh, 2*time.Second)
			w.arm(grace)
			m := member(t, w)
			w.standDown()
			if !ended(w, time.Second) {
				t.Errorf("%s: a watcher told to stand down did not exit within 1s", sh)
			}
			time.Sleep(2 * grace)
			if err := m.Process.Signal(syscall.Signal(0)); err != nil {
				t.Errorf("%s: the group's member is gone after the watcher stood down: %v", sh, err)
			}

			w = startWatcher(sh, 2*time.Second)
			w.arm(grace)
			m = member(t, w)
			t0 := time.Now()
			w.life.Close() // as the kernel does when ctrld-install dies
			waited := make(chan error, 1)
			go func() { waited <- m.Wait() }()
			select {
			case <-waited:
				if el := time.Since(t0); el < grace {
					t.Errorf("%s: the member that ignores SIGTERM died after %v, want the grace period %v first", sh, el, grace)
				}
			case <-time.After(grace + 2*time.Second):
				t.Errorf("%s: the group's member outlived the end of the watcher's pipe by %v", sh, grace+2*time.Second)
			}
			if !ended(w, 2*time.Second) {
				t.Errorf("%s: the watcher did not end with its group", sh)
			}
		})
	}
}

// ignoresTerm reports whether process pid ignores SIGTERM (SigIgn in
// /proc/PID/status; SIGTERM is signal 15).
func ignoresTerm(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "SigIgn:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(15-1)) != 0
		}
	}
	return false
}

// assertNoToken checks what ps shows of the watcher: its argv and its
// environment.
func assertNoToken(t *testing.T, watcher int) {
	t.Helper()
	for _, f := range []string{"cmdline", "environ"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", watcher, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), testToken) {
			t.Errorf("the watcher's %s holds the token %q: %q", f, testToken, b)
		}
		if f == "cmdline" && !strings.HasPrefix(string(b), watcherName+"\x00") {
			t.Errorf("the watcher's cmdline %q does not start with %q: this is not the watcher", b, watcherName)
		}
	}
	assertWatcherIdentity(t, watcher)
}

func waitRecord(t *testing.T, path string) standin.Record {
	t.Helper()
	var r standin.Record
	if !waitFor(t, 5*time.Second, 10*time.Millisecond, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		first, _, ok := bytes.Cut(b, []byte("\n"))
		return ok && json.Unmarshal(first, &r) == nil
	}) {
		t.Fatalf("no record in %s after 5s", path)
	}
	return r
}

// waitFor reports whether cond becomes true within timeout, checking it
// every tick.
func waitFor(t *testing.T, timeout, tick time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if cond() {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		time.Sleep(min(tick, left))
	}
}

func groupGone(t *testing.T, pgid int) bool { return len(liveMembers(t, pgid)) == 0 }

// liveMembers lists the processes of group pgid that are not zombies. A
// zombie has ended; whether it is reaped depends on its new parent (init
// in a container may never reap), so it does not count.
func liveMembers(t *testing.T, pgid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var live []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid {
			live = append(live, pid)
		}
	}
	return live
}
