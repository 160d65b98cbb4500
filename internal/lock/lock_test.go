package lock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

func TestSecondHolderWaitsThenIsBusy(t *testing.T) {
	t.Parallel()
	dir := wine.TempDir(t)
	l1, err := Acquire(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err = Acquire(ctx, dir)
	if !errors.Is(err, ErrBusy) {
		t.Errorf("second Acquire: %v, want %v", err, ErrBusy)
	}
	if waited, want := time.Since(t0), 250*time.Millisecond; waited < want {
		t.Errorf("second Acquire returned after %v, want at least %v: it waits for the budget", waited, want)
	}

	l1.Release()
	l2, err := Acquire(context.Background(), dir)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l2.Release()
}

func TestWaiterGetsTheLockWhenReleased(t *testing.T) {
	t.Parallel()
	dir := wine.TempDir(t)
	l1, err := Acquire(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(200 * time.Millisecond)
		l1.Release()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l2, err := Acquire(ctx, dir)
	if err != nil {
		t.Fatalf("waiting Acquire: %v", err)
	}
	l2.Release()
}

func TestMissingDirectory(t *testing.T) {
	t.Parallel()
	_, err := Acquire(context.Background(), filepath.Join(wine.TempDir(t), "missing"))
	if err == nil {
		t.Errorf("Acquire(missing directory) succeeded, want an error")
	}
	if errors.Is(err, ErrBusy) {
		t.Errorf("Acquire(missing directory): %v, want an error other than %v", err, ErrBusy)
	}
}

func TestHeldInProcess(t *testing.T) {
	// Not parallel: a child forked by a parallel test while this test's
	// lock file is open holds a reference to it until its exec, and the
	// flock lasts while any reference does; "not held" would then see the
	// sibling's child, not this test's lock.
	dir := wine.TempDir(t)
	held, err := Held(dir)
	if err != nil {
		t.Fatal(err)
	}
	if held {
		t.Errorf("Held with no lock file = true, want false: no lock file, no run")
	}
	if _, err := os.Lstat(filepath.Join(dir, FileName)); !os.IsNotExist(err) {
		t.Errorf("Lstat(%s) after Held: %v, want not exist: probing creates nothing", FileName, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, WitnessName)); !os.IsNotExist(err) {
		t.Errorf("Lstat(%s) after Held: %v, want not exist: probing creates nothing", WitnessName, err)
	}

	l, err := Acquire(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	held, err = Held(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !held {
		t.Errorf("Held while locked = false, want true")
	}
	l.Release()
	held, err = Held(dir)
	if err != nil {
		t.Fatal(err)
	}
	if held {
		t.Errorf("Held after Release = true, want false")
	}

	l, err = Acquire(context.Background(), dir)
	if err != nil {
		t.Fatalf("Acquire after Held: %v: a probe leaves no lock behind", err)
	}
	l.Release()
}

func TestReleaseTwice(t *testing.T) {
	t.Parallel()
	l, err := Acquire(context.Background(), wine.TempDir(t))
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	l.Release()
	var nilLock *Lock
	nilLock.Release()
}
