package lock

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// The test binary doubles as a run holding the lock, and as a child that
// only waits.
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
		time.Sleep(time.Minute)
		l.Release()
		os.Exit(0)
	case "wait":
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func helper(t *testing.T, mode, dir string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"="+mode, envDir+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the helper: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, bufio.NewReader(out)
}

// A run ended by TerminateProcess leaves no lock: the kernel closes its
// handle, and LockFileEx's lock goes with it.
func TestHeldByAnotherProcess(t *testing.T) {
	dir := wine.TempDir(t)
	cmd, out := helper(t, "hold", dir)
	if line, err := out.ReadString('\n'); err != nil || line != "locked\n" {
		t.Fatalf("the holder said %q (%v), want \"locked\"", line, err)
	}
	held, err := Held(dir)
	if err != nil || !held {
		t.Errorf("Held while another process holds the lock = %v, %v; want true", held, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := Acquire(ctx, dir); !errors.Is(err, ErrBusy) {
		t.Errorf("Acquire while another process holds the lock: %v, want %v", err, ErrBusy)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatalf("TerminateProcess: %v", err)
	}
	_ = cmd.Wait()
	held, err = Held(dir)
	if err != nil || held {
		t.Errorf("Held after the holder was terminated = %v, %v; want false", held, err)
	}
	l, err := Acquire(context.Background(), dir)
	if err != nil {
		t.Fatalf("Acquire after the holder was terminated: %v", err)
	}
	l.Release()
}

// A directory in a lock file's place is not a lock ctrld-install made.
func TestUntrustedLockFilesOnWindows(t *testing.T) {
	for _, name := range []string{FileName, WitnessName} {
		t.Run(name, func(t *testing.T) {
			dir := wine.TempDir(t)
			if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
				t.Fatal(err)
			}
			if _, err := Acquire(context.Background(), dir); !errors.Is(err, ErrUntrusted) {
				t.Errorf("Acquire: %v, want %v", err, ErrUntrusted)
			}
			if name == FileName {
				if _, err := Held(dir); !errors.Is(err, ErrUntrusted) {
					t.Errorf("Held: %v, want %v", err, ErrUntrusted)
				}
			}
		})
	}
}

// A symbolic link in the lock's place is refused, and nothing is created
// through it.
func TestLockFileLinkOnWindows(t *testing.T) {
	wine.Skip(t, wine.NoSymlinks)
	dir := wine.TempDir(t)
	target := filepath.Join(wine.TempDir(t), "elsewhere")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(dir, FileName)); err != nil {
		t.Skipf("cannot make a symbolic link here: %v", err)
	}
	if _, err := Acquire(context.Background(), dir); !errors.Is(err, ErrUntrusted) {
		t.Errorf("Acquire: %v, want %v", err, ErrUntrusted)
	}
}

// A child started while the lock is held does not keep it: a ctrld left
// running must not keep the home locked.
func TestLockNotInheritedByChildren(t *testing.T) {
	dir := wine.TempDir(t)
	l, err := Acquire(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	helper(t, "wait", dir)
	l.Release()
	held, err := Held(dir)
	if err != nil || held {
		t.Errorf("Held after Release with a child still running = %v, %v; want false", held, err)
	}
}
