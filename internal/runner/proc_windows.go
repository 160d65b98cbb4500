//go:build windows

package runner

import (
	"context"
	"errors"
	"os/exec"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Windows has no process groups that a signal reaches. ctrld goes into a job
// object instead, and everything it starts is born in the job: terminating
// the job ends the whole tree, and JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE ends it
// as well when ctrld-install itself dies and the kernel closes its handle.
// ctrld's service is started by the service control manager, outside the
// job, and survives.
//
// ctrld is created suspended and resumed only once it is in the job: a
// child it started at once, or ctrld-install killed in between, would
// otherwise escape kill-on-close.
//
// Windows has no SIGTERM either: terminate ends the tree at once, and the
// grace period only bounds how long the pipes may stay open.
//
// When the job cannot be made or ctrld cannot be put in it (a job that
// forbids nesting, on old Windows), only ctrld itself is killed, and
// exec.Cmd.WaitDelay still closes pipes a leftover process holds.

// jobExitCode is the exit status of the processes a terminated job ends.
const jobExitCode = 1

var errNotOurChild = errors.New("the process is not this process's child")

// group is ctrld's job. started makes it on the runner's goroutine while
// terminate and kill may run on os/exec's.
type group struct {
	mu     sync.Mutex
	job    windows.Handle // 0 until ctrld is in the job
	closed bool
}

// newGroup needs no watcher: the job's kill-on-close does a watcher's work.
// It has ctrld created suspended, so that ctrld runs no instruction before
// started has put it in the job.
func newGroup(_ context.Context, cmd *exec.Cmd, _ time.Duration, _ bool) *group {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED
	return &group{}
}

// Variables so that tests can widen the moment between the start and the
// job, and make the job fail.
var (
	beforeAssign = func() {}
	newJob       = newKillOnCloseJob
)

// started puts ctrld, created suspended, in a new job, then lets it run.
// Without a job (none could be made, or ctrld could not be put in it) ctrld
// runs all the same, as the package comment says.
func (t *group) started(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	pid := cmd.Process.Pid
	// os/exec holds ctrld's process handle until Wait, so until then the
	// PID names ctrld and no other process.
	defer resume(pid)
	beforeAssign()
	job, err := newJob()
	if err != nil {
		return
	}
	if err := assign(job, pid); err != nil {
		_ = windows.CloseHandle(job)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		// kill ran first: whatever is in the job must end with it.
		_ = windows.TerminateJobObject(job, jobExitCode)
		_ = windows.CloseHandle(job)
		return
	}
	t.job = job
}

// resume resumes the threads of the process with this PID: of a process
// created suspended, its one thread, which os/exec does not hand back.
func resume(pid int) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return
	}
	defer windows.CloseHandle(snap)
	var te windows.ThreadEntry32
	te.Size = uint32(unsafe.Sizeof(te))
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != uint32(pid) {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			continue
		}
		_, _ = windows.ResumeThread(th)
		_ = windows.CloseHandle(th)
	}
}

func newKillOnCloseJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		_ = windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

// assign puts the process with this PID in the job, if it is this process's
// child. The PID names ctrld only while os/exec holds its handle: a ctrld
// that exited at once may already have been waited for and its PID reused by
// an unrelated process, which must never be put in a job that is terminated.
// ctrld-install runs one child at a time, so its only child is ctrld.
func assign(job windows.Handle, pid int) error {
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return err
	}
	defer windows.CloseHandle(p)
	var info windows.PROCESS_BASIC_INFORMATION
	if err := windows.NtQueryInformationProcess(p, windows.ProcessBasicInformation,
		unsafe.Pointer(&info), uint32(unsafe.Sizeof(info)), nil); err != nil {
		return err
	}
	if info.InheritedFromUniqueProcessId != uintptr(windows.GetCurrentProcessId()) {
		return errNotOurChild
	}
	return windows.AssignProcessToJobObject(job, p)
}

// end terminates the job and, when final, closes it. It reports whether a
// job was there to terminate.
func (t *group) end(final bool) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	had := t.job != 0
	if had {
		_ = windows.TerminateJobObject(t.job, jobExitCode)
	}
	if final {
		if had {
			_ = windows.CloseHandle(t.job)
			t.job = 0
		}
		t.closed = true
	}
	return had
}

// terminate ends ctrld's whole tree: the job, or ctrld alone without one.
func (t *group) terminate(cmd *exec.Cmd) error {
	if t.end(false) {
		return nil
	}
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}

// finish ends whatever is left of ctrld's tree once ctrld has been waited
// for, or failed to start.
func (t *group) finish(cmd *exec.Cmd) { t.kill(cmd) }

// kill ends whatever is left of ctrld's tree and releases the job.
func (t *group) kill(cmd *exec.Cmd) {
	t.end(true)
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
