// Package lock keeps runs of ctrld-install on one home directory apart. The
// lock is an advisory lock on a file in the home directory, held through an
// open descriptor, so the kernel releases it when the process dies however
// it dies: a crash never leaves a stale lock behind.
package lock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"
)

// FileName is the lock file's name in the home directory.
const FileName = ".ctrld-install.lock"

// ErrBusy is returned when another run held the lock until ctx was done.
var ErrBusy = errors.New("another ctrld-install run holds the lock")

// pollInterval is how often a waiting run tries again. flock has no timed
// wait, and a blocked flock could not be interrupted by the budget.
const pollInterval = 100 * time.Millisecond

// Lock is a held lock.
type Lock struct{ f *os.File }

// Acquire takes the lock in dir, waiting while ctx allows. It returns
// ErrBusy when ctx ends first, and another error when the lock file cannot
// be opened at all.
func Acquire(ctx context.Context, dir string) (*Lock, error) {
	f, err := openLockFile(filepath.Join(dir, FileName))
	if err != nil {
		return nil, err
	}
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		if ok {
			return &Lock{f: f}, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ErrBusy
		case <-t.C:
		}
	}
}

// Release gives the lock up. The file stays: removing it would let a
// waiting run lock the old file while a new run locks a new one.
func (l *Lock) Release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
