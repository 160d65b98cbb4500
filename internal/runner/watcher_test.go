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

// Without a watcher (a program without the hook) ctrld leads its own group.
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

// A command line that is not the runner's makes no watcher.
func TestWatcherMainRefusesOtherArguments(t *testing.T) {
	for _, args := range [][]string{nil, {"x"}, {"0"}, {"1", "more"}} {
		if got, want := watcherMain(args), 2; got != want {
			t.Errorf("watcherMain(%q) = %d, want %d", args, got, want)
		}
	}
	// Not leading its group: the test process runs in go test's group.
	if syscall.Getpgrp() != os.Getpid() {
		args := []string{strconv.Itoa(os.Getppid())}
		if got, want := watcherMain(args), 2; got != want {
			t.Errorf("watcherMain(%q) not leading its group = %d, want %d", args, got, want)
		}
	}
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
		if f == "cmdline" && !strings.Contains(string(b), watcherArg) {
			t.Errorf("the watcher's cmdline %q lacks %q: this is not the watcher", b, watcherArg)
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
