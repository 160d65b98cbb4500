package platform

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/parse"
)

// A copy of this test binary started as `ctrld run` is a daemon: it says
// it is up, then waits to be killed.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "ctrld" && len(os.Args) > 1 && os.Args[1] == "run" {
		os.Stdout.WriteString("up\n")
		time.Sleep(time.Hour)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func copyExe(t *testing.T, dst string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	tmp := dst + ".new"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	// A package replaces a binary as a new file renamed into place.
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
}

// startDaemon returns once the process runs: Start returns while the
// kernel may still be finishing the exec, when /proc shows no arguments.
func startDaemon(t *testing.T, exe string, args ...string) int {
	t.Helper()
	cmd := exec.Command(exe, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if len(args) > 0 && args[0] == "run" {
		// The test's own timeout bounds a daemon that never says so.
		if _, err := out.Read(make([]byte, 3)); err != nil {
			t.Fatalf("the daemon did not start: %v", err)
		}
	} else {
		// Another program: wait for its arguments to be there.
		cmdline := filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "cmdline")
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if b, _ := os.ReadFile(cmdline); len(b) > 0 {
				break
			}
		}
	}
	return cmd.Process.Pid
}

func writePID(t *testing.T, path string, pid int, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strconv.Itoa(pid)+"\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func TestDaemonRunsBinary(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "ctrld")
	copyExe(t, exe)
	pidFile := filepath.Join(dir, "ctrld.pid")
	writePID(t, pidFile, startDaemon(t, exe, "run", "--cd", "R"), 0o644)
	ctx := context.Background()

	if got := DaemonRunsBinary(ctx, pidFile, exe); got != parse.SameYes {
		t.Fatalf("the daemon runs the binary on disk: %v", got)
	}
	other := filepath.Join(dir, "other")
	copyExe(t, other)
	if got := DaemonRunsBinary(ctx, pidFile, other); got != parse.SameNo {
		t.Errorf("another file: %v", got)
	}
	// A package put a new binary under the running daemon.
	copyExe(t, exe)
	if got := DaemonRunsBinary(ctx, pidFile, exe); got != parse.SameNo {
		t.Errorf("the binary was replaced: %v", got)
	}
	os.Remove(exe)
	if got := DaemonRunsBinary(ctx, pidFile, exe); got != parse.SameNo {
		t.Errorf("the binary was removed: %v", got)
	}
}

func TestDaemonRunsBinaryCannotTell(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "ctrld")
	copyExe(t, exe)
	ctx := context.Background()
	pidFile := filepath.Join(dir, "ctrld.pid")

	if got := DaemonRunsBinary(ctx, pidFile, exe); got != parse.SameUnknown {
		t.Errorf("no PID file: %v", got)
	}
	// Not a daemon: a process whose first argument is not run (a PID
	// reused by another program).
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	writePID(t, pidFile, startDaemon(t, sleep, "30"), 0o644)
	if got := DaemonRunsBinary(ctx, pidFile, exe); got != parse.SameUnknown {
		t.Errorf("not a daemon: %v", got)
	}
	// A PID file others may write is not believed.
	writePID(t, pidFile, startDaemon(t, exe, "run"), 0o666)
	if got := DaemonRunsBinary(ctx, pidFile, exe); got != parse.SameUnknown {
		t.Errorf("a PID file others may write: %v", got)
	}
	// A process that is gone.
	cmd := exec.Command(exe, "run")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	writePID(t, pidFile, cmd.Process.Pid, 0o644)
	if got := DaemonRunsBinary(ctx, pidFile, exe); got != parse.SameUnknown {
		t.Errorf("a dead daemon: %v", got)
	}
}

// Under systemd the daemon is found in the unit's control group.
func TestDaemonFoundInTheServicesCgroup(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "ctrld")
	copyExe(t, exe)
	procs := filepath.Join(dir, "cgroup.procs")
	writePID(t, procs, startDaemon(t, exe, "run"), 0o644)
	old := Current.ServicePIDFiles
	Current.ServicePIDFiles = []string{filepath.Join(dir, "missing"), procs} // v2 absent, v1 there
	defer func() { Current.ServicePIDFiles = old }()
	if got := DaemonRunsBinary(context.Background(), "", exe); got != parse.SameYes {
		t.Errorf("the daemon in the cgroup: %v", got)
	}
	copyExe(t, exe)
	if got := DaemonRunsBinary(context.Background(), "", exe); got != parse.SameNo {
		t.Errorf("the binary replaced: %v", got)
	}
}
