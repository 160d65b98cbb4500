// Package safefile opens the files a root process reads or appends to in
// directories other users may reach: ctrld's result file, the daemon's log,
// the outcome record, the lock, the --log file, the secret files and the
// logs summarize walks. Each is opened without following a link at its last
// component (unless the caller named the path on purpose), without
// blocking on a FIFO put in its place, and judged on the descriptor it
// opened, never on a path looked at before or after: a file swapped in
// between is the file judged.
package safefile

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"sync"
)

// Errors name no path: callers print only fixed text.
var (
	// ErrLink is a symbolic link (or, on Windows, any reparse point) where
	// Rules say not to follow one.
	ErrLink = errors.New("a symbolic link")
	// ErrNotRegular is a directory, FIFO, device or socket where a regular
	// file is wanted.
	ErrNotRegular = errors.New("not a regular file")
	// ErrUntrusted is a file another user owns or may write, or one with
	// another name (a hard link) somewhere else.
	ErrUntrusted = errors.New("owned or writable by another user")
)

// AnyOwner in Rules.Owner accepts a file whoever owns it.
const AnyOwner = -1

// Rules say what a file must be to be opened. The zero Rules accept a
// regular file, reached without a link, that anyone owns.
type Rules struct {
	// Follow follows a link at the path: the administrator named it on
	// the command line. Without it a link is ErrLink.
	Follow bool
	// AnyKind accepts a FIFO or a character device as well (a secret
	// piped in through one); a directory is still ErrNotRegular.
	AnyKind bool
	// Owner is the user that may own the file besides root, or AnyOwner.
	// Windows ignores it: ctrld's home there is checked by its ACL.
	Owner int
	// Private refuses a file that group or others may write.
	Private bool
	// OneLink refuses a file with more than one name: root appending to a
	// hard link a user made would append to the file it names.
	OneLink bool
	// FixMode, when not zero, sets this mode on a file of the right owner
	// before Private is judged (the umask took bits at creation, or an
	// older version made it with another mode).
	FixMode fs.FileMode
	// AdminsOnly gives a file this call creates an ACL of its own on
	// Windows, SYSTEM and Administrators only: inheriting the home's would
	// let Users open it. The mode does that on Unix.
	AdminsOnly bool
}

// Self is the Owner of files this process writes: the effective user
// (root in production; a --simulate run or a test may be another user).
func Self() int { return os.Geteuid() }

// Open opens path for reading under r and returns what it opened.
func Open(path string, r Rules) (*os.File, fs.FileInfo, error) {
	return OpenFile(path, os.O_RDONLY, 0, r)
}

// OpenFile is Open with flags (os.O_RDONLY, os.O_WRONLY|os.O_APPEND, with
// os.O_CREATE and os.O_EXCL) and the mode a created file gets. A missing
// file is an error matching fs.ErrNotExist; a file that breaks r is one of
// the package's errors, wrapped in an *fs.PathError.
func OpenFile(path string, flag int, perm fs.FileMode, r Rules) (*os.File, fs.FileInfo, error) {
	f, err := openFile(path, flag, perm, r.Follow, r.AdminsOnly)
	if err != nil {
		return nil, nil, err
	}
	fi, err := check(f, r)
	if err != nil {
		f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return f, fi, nil
}

func check(f *os.File, r Rules) (fs.FileInfo, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch m := fi.Mode(); {
	case m.IsRegular():
	case r.AnyKind && (m&fs.ModeNamedPipe != 0 || m&fs.ModeCharDevice != 0):
	default:
		return nil, ErrNotRegular
	}
	if r.Owner != AnyOwner && !ownedBy(fi, r.Owner) {
		return nil, ErrUntrusted
	}
	if r.FixMode != 0 && fi.Mode().Perm() != r.FixMode.Perm() {
		if err := f.Chmod(r.FixMode.Perm()); err == nil {
			if fi, err = f.Stat(); err != nil {
				return nil, err
			}
		}
	}
	if r.Private && writableByOthers(fi) {
		return nil, ErrUntrusted
	}
	if r.OneLink && links(f, fi) > 1 {
		return nil, ErrUntrusted
	}
	return fi, nil
}

// Untrusted reports whether err says the file exists but breaks the rules
// (a link, not regular, someone else's), rather than that it is missing or
// could not be opened.
func Untrusted(err error) bool {
	return errors.Is(err, ErrLink) || errors.Is(err, ErrNotRegular) || errors.Is(err, ErrUntrusted)
}

// OpenContext is Open bounded by ctx: opening and reading a file on a
// stalled network or FUSE mount, or a procfs file whose read waits for the
// kernel (/proc/kmsg), must not keep a run past its budget or its signals.
// use runs with the open file; when ctx ends first, OpenContext closes the
// file, which wakes a read waiting in the runtime's poller, and returns
// ctx's error at once, leaving a read stuck in the kernel to its goroutine.
// use must not touch the caller's state after ctx is done.
func OpenContext(ctx context.Context, path string, r Rules, use func(*os.File, fs.FileInfo) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var mu sync.Mutex
	var open *os.File
	abandoned := false
	done := make(chan error, 1)
	// Ends when use returns; abandoned when ctx ends first, its file is
	// closed under it, and a call stuck in the kernel ends with the process.
	go func() {
		f, fi, err := Open(path, r)
		if err != nil {
			done <- err
			return
		}
		mu.Lock()
		if abandoned {
			mu.Unlock()
			f.Close()
			return
		}
		open = f
		mu.Unlock()
		err = use(f, fi)
		mu.Lock()
		open = nil
		mu.Unlock()
		f.Close()
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		mu.Lock()
		abandoned = true
		if open != nil {
			open.Close()
		}
		mu.Unlock()
		return ctx.Err()
	}
}
