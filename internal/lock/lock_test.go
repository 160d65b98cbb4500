package lock

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSecondHolderWaitsThenIsBusy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l1, err := Acquire(context.Background(), dir)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err = Acquire(ctx, dir)
	assert.ErrorIs(t, err, ErrBusy)
	assert.GreaterOrEqual(t, time.Since(t0), 250*time.Millisecond, "it waited for the budget")

	l1.Release()
	l2, err := Acquire(context.Background(), dir)
	require.NoError(t, err)
	l2.Release()
}

func TestWaiterGetsTheLockWhenReleased(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l1, err := Acquire(context.Background(), dir)
	require.NoError(t, err)
	go func() {
		time.Sleep(200 * time.Millisecond)
		l1.Release()
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l2, err := Acquire(ctx, dir)
	require.NoError(t, err)
	l2.Release()
}

func TestMissingDirectory(t *testing.T) {
	t.Parallel()
	_, err := Acquire(context.Background(), filepath.Join(t.TempDir(), "missing"))
	assert.Error(t, err)
	assert.NotErrorIs(t, err, ErrBusy)
}

func TestHeldInProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	held, err := Held(dir)
	require.NoError(t, err)
	assert.False(t, held, "no lock file: no run")
	_, err = os.Lstat(filepath.Join(dir, FileName))
	assert.True(t, os.IsNotExist(err), "probing creates nothing")
	_, err = os.Lstat(filepath.Join(dir, WitnessName))
	assert.True(t, os.IsNotExist(err), "probing creates nothing")

	l, err := Acquire(context.Background(), dir)
	require.NoError(t, err)
	held, err = Held(dir)
	require.NoError(t, err)
	assert.True(t, held)
	l.Release()
	held, err = Held(dir)
	require.NoError(t, err)
	assert.False(t, held)

	l, err = Acquire(context.Background(), dir)
	require.NoError(t, err, "a probe leaves no lock behind")
	l.Release()
}

func TestReleaseTwice(t *testing.T) {
	t.Parallel()
	l, err := Acquire(context.Background(), t.TempDir())
	require.NoError(t, err)
	l.Release()
	l.Release()
	var nilLock *Lock
	nilLock.Release()
}
