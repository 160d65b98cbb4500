//go:build unix

package lock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the helper processes: a run holding the lock,
// and a status probe running as another user.
const (
	envHelper = "LOCK_TEST_HELPER"
	envDir    = "LOCK_TEST_DIR"
)

func TestMain(m *testing.M) {
	switch os.Getenv(envHelper) {
	case "hold":
		l, err := Acquire(context.Background(), os.Getenv(envDir))
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		fmt.Println("locked")
		if os.Getenv("LOCK_TEST_EXIT") != "" {
			os.Exit(0) // the kernel drops the lock; the parent reaps nothing
		}
		time.Sleep(time.Minute)
		l.Release()
		os.Exit(0)
	case "probe":
		held, err := Held(os.Getenv(envDir))
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		fmt.Println("held", held)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// holder starts a process that takes the lock in dir and waits until it
// says so.
func holder(t *testing.T, dir string, exit bool) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"=hold", envDir+"="+dir)
	if exit {
		cmd.Env = append(cmd.Env, "LOCK_TEST_EXIT=1")
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the holder: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the holder's output: %v", err)
	}
	if want := "locked\n"; line != want {
		t.Fatalf("holder said %q, want %q", line, want)
	}
	return cmd
}

func TestHeldByAnotherProcess(t *testing.T) {
	// Not parallel: a child forked by a parallel test while this test's
	// lock file is open holds a reference to it until its exec, and the
	// flock lasts while any reference does; "not held" would then see the
	// sibling's child, not this test's lock.
	dir := t.TempDir()
	cmd := holder(t, dir, false)

	held, err := Held(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !held {
		t.Errorf("Held while another process holds the lock = false, want true")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = Acquire(ctx, dir)
	if !errors.Is(err, ErrBusy) {
		t.Errorf("Acquire while another process holds the lock: %v, want %v", err, ErrBusy)
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatalf("killing the holder: %v", err)
	}
	_ = cmd.Wait()
	held, err = Held(dir)
	if err != nil {
		t.Fatal(err)
	}
	if held {
		t.Errorf("Held after the holder was killed = true, want false: SIGKILL leaves no lock behind")
	}
	l, err := Acquire(context.Background(), dir)
	if err != nil {
		t.Fatalf("Acquire after the holder was killed: %v", err)
	}
	l.Release()
}

// A process that exited but was not reaped holds no descriptor, so no lock:
// a zombie is not a run, though its process ID is still taken.
func TestZombieHoldsNothing(t *testing.T) {
	// Not parallel: a child forked by a parallel test while this test's
	// lock file is open holds a reference to it until its exec, and the
	// flock lasts while any reference does; "not held" would then see the
	// sibling's child, not this test's lock.
	dir := t.TempDir()
	cmd := holder(t, dir, true)
	pid := cmd.Process.Pid
	deadline := time.Now().Add(5 * time.Second)
	for !isZombie(pid) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		if !isZombie(pid) {
			t.Fatalf("isZombie(%d) = false, want true: the child is a zombie", pid)
		}
	} else {
		time.Sleep(200 * time.Millisecond) // no /proc: give it time to exit
	}
	held, err := Held(dir)
	if err != nil {
		t.Fatal(err)
	}
	if held {
		t.Errorf("Held with only a zombie holder = true, want false")
	}
}

// isZombie reports whether pid is a zombie with no thread left: the leader
// of a thread group shows Z while its other threads are still exiting, and
// the last of them is what closes the descriptors.
func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, ok := strings.Cut(string(b), ") ")
	if !ok || !strings.HasPrefix(rest, "Z") {
		return false
	}
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	return err == nil && len(tasks) <= 1
}

// status runs as any user. As root the lock file is probed; another user
// cannot open it (0600) and probes the 0644 witness instead.
func TestHeldAsAnotherUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("running a process as another user needs root")
	}
	dir := t.TempDir()
	// t.TempDir's parent is 0700; the probe must be able to get in.
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Nor can it run the test binary where go test left it. A hard link
	// where one can be made: a copy being written while a parallel test
	// forks cannot be run ("text file busy", golang/go#22315).
	exe := filepath.Join(dir, "lock.test")
	if os.Link(os.Args[0], exe) != nil {
		b, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(exe, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	probe := func() string {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), envHelper+"=probe", envDir+"="+dir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Sprintf("%v: %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}

	if got, want := probe(), "held false"; got != want {
		t.Errorf("probe with no lock file yet = %q, want %q", got, want)
	}
	cmd := holder(t, dir, false)
	for name, want := range map[string]os.FileMode{FileName: 0o600, WitnessName: 0o644} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("mode of %s = %v, want %v", name, got, want)
		}
	}
	if got, want := probe(), "held true"; got != want {
		t.Errorf("probe while held = %q, want %q", got, want)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatalf("killing the holder: %v", err)
	}
	_ = cmd.Wait()
	if got, want := probe(), "held false"; got != want {
		t.Errorf("probe after the holder was killed = %q, want %q", got, want)
	}
}

// A lock file the user can open would let them hold it and block every
// install; one made readable by an older version is tightened.
func TestLockFileModes(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	for name, want := range map[string]os.FileMode{FileName: 0o600, WitnessName: 0o644} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("mode of %s = %v, want %v", name, got, want)
		}
	}
}

func TestUntrustedLockFiles(t *testing.T) {
	t.Parallel()
	for _, name := range []string{FileName, WitnessName} {
		for _, tc := range []struct {
			what  string
			plant func(t *testing.T, p string)
		}{
			{"symlink", func(t *testing.T, p string) {
				target := filepath.Join(t.TempDir(), "elsewhere")
				if err := os.Symlink(target, p); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					if _, err := os.Lstat(target); !os.IsNotExist(err) {
						t.Errorf("Lstat(link target): %v, want not exist: nothing was created through the link", err)
					}
				})
			}},
			{"fifo", func(t *testing.T, p string) {
				if err := syscall.Mkfifo(p, 0o600); err != nil {
					t.Fatal(err)
				}
			}},
			{"directory", func(t *testing.T, p string) {
				if err := os.Mkdir(p, 0o700); err != nil {
					t.Fatal(err)
				}
			}},
		} {
			t.Run(name+" "+tc.what, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				tc.plant(t, filepath.Join(dir, name))
				done := make(chan struct{})
				go func() {
					defer close(done)
					_, err := Acquire(context.Background(), dir)
					if !errors.Is(err, ErrUntrusted) {
						t.Errorf("Acquire: %v, want %v", err, ErrUntrusted)
					}
					held, err := Checker{UID: os.Geteuid()}.probe(filepath.Join(dir, name))
					if !errors.Is(err, ErrUntrusted) {
						t.Errorf("probe(%s): %v, want %v", name, err, ErrUntrusted)
					}
					if held {
						t.Errorf("probe(%s) = true, want false", name)
					}
				}()
				select {
				case <-done:
				case <-time.After(5 * time.Second):
					t.Fatal("blocked")
				}
				if name == FileName {
					if _, err := Held(dir); !errors.Is(err, ErrUntrusted) {
						t.Errorf("Held: %v, want %v", err, ErrUntrusted)
					}
				}
			})
		}
	}
}

// The owner is a parameter, so a file of another user is refused in tests
// run as root and as anyone else.
func TestLockFileOfAnotherUser(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := Acquire(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	other := Checker{UID: os.Geteuid() + 1}
	if os.Geteuid() == 0 {
		// Root's files are trusted by everyone; make it another user's.
		if err := os.Chown(filepath.Join(dir, FileName), 65534, 65534); err != nil {
			t.Fatal(err)
		}
		other = Checker{UID: 0}
	}
	_, err = other.Acquire(context.Background(), dir)
	if !errors.Is(err, ErrUntrusted) {
		t.Errorf("Acquire of another user's lock file: %v, want %v", err, ErrUntrusted)
	}
	_, err = other.Held(dir)
	if !errors.Is(err, ErrUntrusted) {
		t.Errorf("Held of another user's lock file: %v, want %v", err, ErrUntrusted)
	}
}

func TestWritableLockFileOfAnotherUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("changing a file's owner needs root")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, WitnessName)
	if err := os.WriteFile(p, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := (Checker{UID: 0}).probe(p); !errors.Is(err, ErrUntrusted) {
		t.Errorf("probe of a writable witness of another user: %v, want %v", err, ErrUntrusted)
	}
}

// The lock is not inherited by ctrld: a ctrld left running after
// ctrld-install died must not keep the home locked.
func TestLockNotInheritedByChildren(t *testing.T) {
	// Not parallel: a child forked by a parallel test while this test's
	// lock file is open holds a reference to it until its exec, and the
	// flock lasts while any reference does; "not held" would then see the
	// sibling's child, not this test's lock.
	dir := t.TempDir()
	l, err := Acquire(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatalf("starting sleep: %v", err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	l.Release()
	held, err := Held(dir)
	if err != nil {
		t.Fatal(err)
	}
	if held {
		t.Errorf("Held after Release with a child still running = true, want false")
	}
}
