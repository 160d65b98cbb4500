// Package lock keeps runs of ctrld-install on one home directory apart, and
// tells status whether a run is alive. The lock is an advisory lock held
// through an open descriptor, so the kernel releases it when the process
// dies however it dies: a crash never leaves a stale lock behind, and a
// held lock is proof of a live run where a process ID or name is not.
//
// Two files in the home directory:
//
//   - FileName, the lock itself, readable by root only (0600). Holding it
//     is what keeps runs apart. A file others could open would let any local
//     user hold it, and every install would then wait out its budget and
//     end INSTALLER_BUSY: an unprivileged user could block provisioning.
//   - WitnessName (0644), which a run also holds, so that status run by any
//     user can see a run is alive. A user holding it can only make status
//     wrong, never stop a run.
//
// Held probes the lock itself when it can open it (as root, which is how
// MDM inventory scripts run), and the witness otherwise.
package lock

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
)

// FileName is the lock file's name in the home directory.
const FileName = ".ctrld-install.lock"

// WitnessName is the name of the file that shows a run is alive to users
// who cannot open the lock file.
const WitnessName = ".ctrld-install.running"

// Modes the two files are created with and kept at.
const (
	lockMode    = 0o600
	witnessMode = 0o644
)

// ErrBusy is returned when another run held the lock until ctx was done.
var ErrBusy = errors.New("another ctrld-install run holds the lock")

// ErrUntrusted is returned for a lock or witness file that is not a regular
// file owned by root (or the Checker's UID), or that group or others can
// write: ctrld-install did not make it, and must neither write it nor
// believe it.
var ErrUntrusted = errors.New("the lock file in the home directory (--home) cannot be trusted")

// pollInterval is how often a waiting run tries again. flock has no timed
// wait, and a blocked flock could not be interrupted by the budget.
const pollInterval = 100 * time.Millisecond

// witnessWait bounds how long a run tries for the witness. Only a status
// probe, which holds it for microseconds, or a user meddling with it can be
// in the way, and the run must not wait on either.
const witnessWait = time.Second

// Checker names who may own the lock files besides root.
type Checker struct {
	// UID may own the files besides root: the effective user in
	// production, so that a --simulate run in a user's temporary home
	// works. Files owned by root are trusted by everyone. Windows ignores
	// it.
	UID int
}

func self() Checker { return Checker{UID: os.Geteuid()} }

// Lock is a held lock.
type Lock struct {
	f       *os.File
	witness *os.File
}

// Acquire is Checker{UID: os.Geteuid()}.Acquire.
func Acquire(ctx context.Context, dir string) (*Lock, error) { return self().Acquire(ctx, dir) }

// Held is Checker{UID: os.Geteuid()}.Held.
func Held(dir string) (bool, error) { return self().Held(dir) }

// Acquire takes the lock in dir, waiting while ctx allows. It returns
// ErrBusy when ctx ends first, ErrUntrusted for a lock file it did not
// make, and another error when the lock file cannot be opened at all.
func (c Checker) Acquire(ctx context.Context, dir string) (*Lock, error) {
	f, err := c.open(filepath.Join(dir, FileName), lockMode, true)
	if err != nil {
		return nil, err
	}
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		ok, err := tryLock(f, true)
		if err != nil {
			f.Close()
			return nil, err
		}
		if ok {
			break
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ErrBusy
		case <-t.C:
		}
	}
	w, err := c.holdWitness(ctx, filepath.Join(dir, WitnessName))
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Lock{f: f, witness: w}, nil
}

// holdWitness takes the witness exclusively. Status probes with a shared
// lock, so probes never see each other as a run. When the witness stays
// taken (a user holds it), the run goes on without it: non-root status may
// then report the run as interrupted, but the run itself is not stopped.
func (c Checker) holdWitness(ctx context.Context, path string) (*os.File, error) {
	w, err := c.open(path, witnessMode, true)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, witnessWait)
	defer cancel()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		ok, err := tryLock(w, true)
		if ok {
			return w, nil
		}
		if err != nil {
			w.Close()
			return nil, nil
		}
		select {
		case <-ctx.Done():
			w.Close()
			return nil, nil
		case <-t.C:
		}
	}
}

// Release gives the lock up. The files stay: removing the lock file would
// let a waiting run lock the old file while a new run locks a new one.
func (l *Lock) Release() {
	if l == nil {
		return
	}
	// The witness goes first, so no moment shows a run that is not there
	// as alive: status never sees the witness held without the lock.
	if l.witness != nil {
		l.witness.Close()
		l.witness = nil
	}
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// Held reports whether a run holds the lock in dir, without taking it for
// longer than a probe and without creating anything: no lock file means no
// run. It opens the files read-only, so it works for any user as long as
// the files are root's and readable (the witness is 0644).
//
// A process that merely has the witness open is not a run: only a lock
// counts, and the kernel drops it when the process exits, zombie or not.
func (c Checker) Held(dir string) (bool, error) {
	held, err := c.probe(filepath.Join(dir, FileName))
	if errors.Is(err, fs.ErrPermission) {
		return c.probe(filepath.Join(dir, WitnessName))
	}
	return held, err
}

func (c Checker) probe(path string) (bool, error) {
	f, err := c.open(path, 0, false)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	ok, err := tryLock(f, false)
	if err != nil {
		return false, err
	}
	if ok {
		unlock(f)
	}
	return !ok, nil
}

// fileWait bounds how long File waits for another process's lock on a
// file: the only other holder is a run rotating the same log, which holds
// it for one rename and one open.
const fileWait = 2 * time.Second

// File locks f itself exclusively, waiting at most fileWait, and returns
// the function that unlocks it. Runs that share a --log rotate it under
// this lock, so two of them never both rotate it.
func File(f *os.File) (unlockFile func(), err error) {
	deadline := time.Now().Add(fileWait)
	for {
		ok, err := tryLock(f, true)
		if err != nil {
			return nil, err
		}
		if ok {
			return func() { unlock(f) }, nil
		}
		if time.Now().After(deadline) {
			return nil, ErrBusy
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// open opens a lock file under safefile's rules: no link followed (a link
// planted in the home must not make root create, lock or chmod a file
// elsewhere), no wait on a FIFO planted there, and on the descriptor a
// regular file owned by root or c.UID that group and others cannot write.
// With create, the file is made with mode if missing (on Windows with an
// ACL of its own) and opened for writing, which creating needs; a file of
// the right owner is brought back to mode. Without it, it is opened
// read-only, which is all flock needs.
func (c Checker) open(path string, mode os.FileMode, create bool) (*os.File, error) {
	rules := safefile.Rules{Owner: c.UID, Private: true}
	if !create {
		return c.checked(path, os.O_RDONLY, 0, rules)
	}
	rules.FixMode, rules.AdminsOnly = mode, mode == lockMode
	for range 3 {
		f, err := c.checked(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, mode, rules)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
		f, err = c.checked(path, os.O_RDWR, mode, rules)
		// Removed between the two opens: try again.
		if !errors.Is(err, fs.ErrNotExist) {
			return f, err
		}
	}
	return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
}

func (c Checker) checked(path string, flag int, mode os.FileMode, rules safefile.Rules) (*os.File, error) {
	f, _, err := safefile.OpenFile(path, flag, mode, rules)
	if safefile.Untrusted(err) {
		return nil, ErrUntrusted
	}
	return f, err
}
