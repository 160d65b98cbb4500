package lock

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSecondHolderWaitsThenIsBusy(t *testing.T) {
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
	_, err := Acquire(context.Background(), t.TempDir()+"/missing")
	assert.Error(t, err)
	assert.NotErrorIs(t, err, ErrBusy)
}
