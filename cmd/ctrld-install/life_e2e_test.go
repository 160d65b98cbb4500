//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
	"github.com/Control-D-Inc/ctrld-install/internal/standin/extra"
)

// The life of ctrld's processes through the built binary: a daemon that a
// SysV init script starts inside ctrld's process group, and nothing of a
// run left after ctrld-install is killed, whichever way and during
// whichever command.

// sysvDaemon returns the PID file of the stand-in's Daemon action and kills
// that daemon when the test ends.
func (w *world) sysvDaemon() string {
	pidFile := filepath.Join(w.dir, "ctrld.pid")
	w.t.Cleanup(func() {
		if pid, ok := extra.Alive(pidFile); ok {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return pidFile
}

// The SysV script starts the daemon with `&` and no setsid, inside the
// process group of ctrld start: it runs on after start exits. (The upgrade
// through ctrld restart, against ctrld's own captured script, is
// TestDeviceDaemonSurvivesInstallAndUpgrade.)
func TestSysVDaemonOutlivesInstall(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	pidFile := w.sysvDaemon()
	start := w.success()
	start.Daemon = pidFile
	status := standin.Action{NeedFile: w.serviceFile, NeedAlive: pidFile}
	w.script(standin.Script{Version: "v1.5.0", Start: start, Status: status})
	w.assertSuccess(w.run("--token", canaryToken))
	first, ok := extra.Alive(pidFile)
	require.True(t, ok, "the daemon ctrld start left in its group died with the run")
	g, err := syscall.Getpgid(first)
	require.NoError(t, err)
	assert.Equal(t, w.argv()[0].Pgid, g, "the daemon is in ctrld start's process group, as the SysV script leaves it")

	r := w.run("--token", canaryToken)
	assert.Equal(t, "ctrld-install: already provisioned, nothing to do (exit 0)", finalLine(r.stdout))
	again, ok := extra.Alive(pidFile)
	require.True(t, ok)
	assert.Equal(t, first, again, "a skip leaves the daemon alone")
	w.assertNoCanary(r)
}

// On a timeout ctrld start's whole group is gone, the daemon in it too.
func TestSysVDaemonDiesWithATimedOutStart(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	w := newWorld(t)
	pidFile := w.sysvDaemon()
	start := w.success()
	start.Daemon, start.Hang, start.Stdout = pidFile, true, leak
	w.script(standin.Script{Start: start, Status: standin.Action{NeedFile: w.serviceFile, NeedAlive: pidFile}})
	r := w.run("--token", canaryToken, "--timeout", "2s")
	w.assertFailure(r, codes.CtrldTimeout, "exit-status")
	pgid := w.argv()[0].Pgid
	killGroupLater(t, pgid)
	groupGoneWithin(t, pgid, time.Now(), 2*time.Second)
	_, alive := extra.Alive(pidFile)
	assert.False(t, alive, "the daemon outlived a timed-out ctrld start")
}

// ctrld-install killed by name, as an admin's or an RMM agent's cleanup
// does (`pkill -9 -f ctrld-install`, `pkill -9 ctrld-install`), or by
// SIGKILL of its process group, during ctrld start, status or --version:
// 5 s later nothing of the run is alive. The watcher answers to neither
// name, and the kernel ends ctrld itself with ctrld-install.
func TestNothingOfTheRunOutlivesAKilledInstaller(t *testing.T) {
	fullE2E(t)
	t.Parallel()
	for _, tc := range []struct {
		name   string
		during string // start, status, version
		kill   string // "pkill -f", "pkill", "group"
	}{
		{"cmdline match during start", "start", "pkill -f"},
		{"name match during start", "start", "pkill"},
		{"cmdline match during status", "status", "pkill -f"},
		{"SIGKILL of the group during version", "version", "group"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			hang := filepath.Join(w.dir, "hang.jsonl")
			hanging := standin.Action{Record: hang, Hang: true, IgnoreTerm: true, Stdout: leak}
			s := standin.Script{Start: w.success()}
			switch tc.during {
			case "start":
				hanging.Grandchild = true // a process of ctrld's that ignores SIGTERM too
				s.Start = hanging
			case "status":
				s.Status = hanging
			case "version":
				s.VersionRun = &hanging
			}
			w.script(s)
			// A session of its own: the kills below reach only this run.
			p := startInstaller(t, &syscall.SysProcAttr{Setsid: true}, nil, w.worldArgs("--token", canaryToken, "--timeout", "1m")...)
			sid := p.cmd.Process.Pid
			running := waitForStart(t, hang)
			killGroupLater(t, running.Pgid)
			t.Cleanup(func() { killSession(sid) })

			t0 := time.Now()
			switch tc.kill {
			case "group":
				require.NoError(t, syscall.Kill(-sid, syscall.SIGKILL))
			default:
				killed := pkill(t, sid, "ctrld-install", tc.kill == "pkill -f")
				assert.Equal(t, []int{sid}, killed, "only ctrld-install answers to its name")
			}
			r := p.wait(t, 5*time.Second)
			assert.Equal(t, -1, r.exit, "killed by the signal")
			for {
				left := sessionMembers(sid)
				if len(left) == 0 {
					t.Logf("nothing of the run alive %s after the kill", time.Since(t0).Round(time.Millisecond))
					break
				}
				if time.Since(t0) > 5*time.Second {
					require.FailNow(t, "processes of the run outlived ctrld-install", "5 s after the kill: %v", left)
				}
				time.Sleep(20 * time.Millisecond)
			}
			w.assertNoCanary(r)
		})
	}
}

// member is a live process of a session, as ps would show it.
type member struct {
	pid     int
	comm    string
	cmdline string
}

// sessionMembers lists the processes of session sid that have not ended
// (zombies have: whether PID 1 reaps them is the container's business).
func sessionMembers(sid int) []member {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []member
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp session ...; comm may hold anything.
		open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(string(b[end+1:]))
		if len(f) < 4 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if s, _ := strconv.Atoi(f[3]); s != sid {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		cmdline, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
		out = append(out, member{pid: pid, comm: string(b[open+1 : end]), cmdline: string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))})
	}
	return out
}

// pkill does what `pkill -9 [-f] pattern` does, within session sid alone
// (other tests run beside this one): SIGKILL to every process whose command
// line (-f) or process name holds pattern. It returns the PIDs it killed.
func pkill(t *testing.T, sid int, pattern string, full bool) []int {
	t.Helper()
	var killed []int
	for _, m := range sessionMembers(sid) {
		subject := m.comm
		if full {
			subject = m.cmdline
		}
		if strings.Contains(subject, pattern) {
			require.NoError(t, syscall.Kill(m.pid, syscall.SIGKILL))
			killed = append(killed, m.pid)
		}
	}
	return killed
}

func killSession(sid int) {
	for _, m := range sessionMembers(sid) {
		_ = syscall.Kill(m.pid, syscall.SIGKILL)
	}
}
