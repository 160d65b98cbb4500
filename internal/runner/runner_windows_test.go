//go:build windows

package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// The test binary is also every child the tests run, chosen by childEnv:
//
//	injob    print whether it is in a job, first thing, and exit
//	tree     start a grandchild (hold), write both PIDs to pidsEnv, hang
//	hold     hang
//	lines    print two lines and exit 3
//	parent   a stand-in ctrld-install: Run a tree child, hang
const (
	childEnv = "RUNNER_TEST_CHILD"
	pidsEnv  = "RUNNER_TEST_PIDS"
)

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case "injob":
		in, err := isProcessInJob(windows.CurrentProcess())
		if err != nil {
			fmt.Println("in job: unknown:", err)
			os.Exit(1)
		}
		fmt.Println("in job:", in)
		os.Exit(0)
	case "tree":
		c := exec.Command(os.Args[0])
		c.Env = append(os.Environ(), childEnv+"=hold")
		if err := c.Start(); err != nil {
			os.Exit(1)
		}
		pids := fmt.Sprintf("%d %d", os.Getpid(), c.Process.Pid)
		if err := os.WriteFile(os.Getenv(pidsEnv)+".tmp", []byte(pids), 0o644); err != nil {
			os.Exit(1)
		}
		os.Rename(os.Getenv(pidsEnv)+".tmp", os.Getenv(pidsEnv))
		fmt.Println("started")
		time.Sleep(time.Hour)
	case "hold":
		time.Sleep(time.Hour)
	case "lines":
		fmt.Println("to stdout")
		fmt.Fprintln(os.Stderr, "to stderr")
		os.Exit(3)
	case "parent":
		self, _ := os.Executable()
		env := append(os.Environ(), childEnv+"=tree")
		_, _ = Run(context.Background(), Command{Path: self, Args: nil, Env: env, Grace: time.Second})
		time.Sleep(time.Hour)
	}
	os.Exit(2)
}

func child(t *testing.T, mode string, extraEnv ...string) Command {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Command{Path: self, Dir: filepath.Dir(self), Env: append(append(os.Environ(), childEnv+"="+mode), extraEnv...), Grace: time.Second}
}

// alive reports whether a process with this PID is running. A PID is
// checked only while the test knows its process has not been reaped by
// anyone but the kernel, so reuse within the test's seconds is not a
// concern.
func alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ev, _ := windows.WaitForSingleObject(h, 0)
	return ev == uint32(windows.WAIT_TIMEOUT)
}

func waitGone(t *testing.T, within time.Duration, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var left []int
		for _, p := range pids {
			if alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range left {
				if pr, err := os.FindProcess(p); err == nil {
					pr.Kill()
				}
			}
			t.Fatalf("processes %v still running %v later", left, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readPIDs reads the PIDs a tree child wrote, waiting for the file up to
// within.
func readPIDs(path string, within time.Duration) ([]int, error) {
	deadline := time.Now().Add(within)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			var pids []int
			for _, f := range strings.Fields(string(b)) {
				n, err := strconv.Atoi(f)
				if err != nil {
					return nil, fmt.Errorf("the PID file holds %q", b)
				}
				pids = append(pids, n)
			}
			return pids, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no PIDs in %s after %v", path, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunLinesAndExitCode(t *testing.T) {
	var lines []string
	c := child(t, "lines")
	c.Line = func(b []byte) { lines = append(lines, strings.TrimSuffix(string(b), "\r")) }
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.ExitCode != 3 || res.TimedOut || res.Canceled {
		t.Errorf("Run = %+v, want exit 3", res)
	}
	if got := strings.Join(lines, "|"); got != "to stdout|to stderr" {
		t.Errorf("lines = %q, want to stdout|to stderr", got)
	}
}

// ctrld is in its job before it runs one instruction. beforeAssign holds
// the moment between the start and the job open for 300 ms: a ctrld that
// was not created suspended runs in that moment and finds itself in no job.
func TestCtrldIsInTheJobFromItsFirstInstruction(t *testing.T) {
	beforeAssign = func() { time.Sleep(300 * time.Millisecond) }
	t.Cleanup(func() { beforeAssign = func() {} })
	var out []string
	c := child(t, "injob")
	c.Line = func(b []byte) { out = append(out, strings.TrimSpace(string(b))) }
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.ExitCode != 0 || len(out) != 1 || out[0] != "in job: true" {
		t.Errorf("the child printed %q and exited %d; want \"in job: true\", exit 0", out, res.ExitCode)
	}
}

// Without a job ctrld still runs: resumed, not left suspended until the
// budget is spent.
func TestCtrldRunsWhenNoJobCanBeMade(t *testing.T) {
	newJob = func() (windows.Handle, error) { return 0, errors.New("injected") }
	t.Cleanup(func() { newJob = newKillOnCloseJob })
	var out []string
	c := child(t, "injob")
	c.Line = func(b []byte) { out = append(out, strings.TrimSpace(string(b))) }
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, c)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.TimedOut || res.ExitCode != 0 || len(out) != 1 || out[0] != "in job: false" {
		t.Errorf("Run = %+v after %v, printed %q; want exit 0 and \"in job: false\"", res, time.Since(start), out)
	}
}

// The time limit ends ctrld and what it started.
func TestRunTimeoutEndsTheTree(t *testing.T) {
	pidsFile := filepath.Join(wine.TempDir(t), "pids")
	c := child(t, "tree", pidsEnv+"="+pidsFile)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	res, err := Run(ctx, c)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !res.TimedOut {
		t.Errorf("Run = %+v, want TimedOut", res)
	}
	pids, err := readPIDs(pidsFile, 0)
	if err != nil || len(pids) != 2 {
		t.Fatalf("the child's PIDs: %v, %v; want ctrld's and its child's", pids, err)
	}
	waitGone(t, 2*time.Second, pids...)
}

// ctrld-install ended by TerminateProcess (what a kill from Task Manager or
// an RMM agent does) takes ctrld and its children with it: the job's
// handle closes with the process, and kill-on-close ends the job.
func TestTerminatingCtrldInstallEndsCtrldsTree(t *testing.T) {
	pidsFile := filepath.Join(wine.TempDir(t), "pids")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(self)
	parent.Env = append(os.Environ(), childEnv+"=parent", pidsEnv+"="+pidsFile)
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	pids, err := readPIDs(pidsFile, 20*time.Second)
	if err != nil {
		parent.Process.Kill()
		t.Fatal(err)
	}
	if err := parent.Process.Kill(); err != nil { // TerminateProcess
		t.Fatalf("TerminateProcess: %v", err)
	}
	_ = parent.Wait()
	waitGone(t, 5*time.Second, pids...)
}

// What ctrld starts is born in its job.
func TestCtrldsChildrenAreBornInTheJob(t *testing.T) {
	pidsFile := filepath.Join(wine.TempDir(t), "pids")
	c := child(t, "tree", pidsEnv+"="+pidsFile)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	var inJob [2]bool
	c.Line = func([]byte) {
		pids, _ := readPIDs(pidsFile, time.Second)
		for i, pid := range pids {
			// Wine wants PROCESS_QUERY_INFORMATION here; the limited right
			// is enough on Windows.
			h, err := windows.OpenProcess(windows.PROCESS_QUERY_INFORMATION, false, uint32(pid))
			if err != nil {
				continue
			}
			inJob[i], _ = isProcessInJob(h)
			windows.CloseHandle(h)
		}
		cancel()
	}
	go func() { _, _ = Run(ctx, c); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not end after cancel")
	}
	if !inJob[0] || !inJob[1] {
		t.Errorf("in a job: ctrld %v, its child %v; want both", inJob[0], inJob[1])
	}
}

var procIsProcessInJob = windows.NewLazySystemDLL("kernel32.dll").NewProc("IsProcessInJob")

// isProcessInJob is kernel32's IsProcessInJob with no particular job.
func isProcessInJob(h windows.Handle) (bool, error) {
	var in int32
	r, _, err := procIsProcessInJob.Call(uintptr(h), 0, uintptr(unsafe.Pointer(&in)))
	if r == 0 {
		return false, err
	}
	return in != 0, nil
}
