package report

import (
	"errors"
	"io/fs"
	"os"

	"github.com/Control-D-Inc/ctrld-install/internal/lock"
	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
)

// MaxLog is the size past which a log is rotated at the start of a run.
const MaxLog = 1 << 20

// logRules: root appends to the log, so it must be a regular file of root
// (or the running user) with no other name: a hard link a user made to a
// file of root's would have root append to that file.
var logRules = safefile.Rules{Owner: safefile.Self(), OneLink: true}

// OpenLog starts copying lines to the --log file. A log over MaxLog is
// first renamed to <log>.1, replacing an older one, so a device that runs
// the policy every 15 minutes keeps a bounded log. Each run starts with a
// header line of fixed words. A log that cannot be opened is reported and
// the run goes on: the exit status and stdout still carry the outcome. The
// returned function closes the log.
func (p *Printer) OpenLog(path, header string) func() {
	if path == "" {
		return func() {}
	}
	f, restarted, err := openRotated(path)
	if err != nil {
		p.Errorf("cannot open the log file; continuing without it")
		return func() {}
	}
	p.SetLog(f)
	p.LogOnly("%s", header)
	if restarted {
		p.Errorf("the log file could not be rotated to its .1 name, so it was started again")
	}
	return func() {
		p.SetLog(nil)
		f.Close()
	}
}

// openRotated opens the log, rotating it first when it is over MaxLog.
// The rotation happens under a lock on the log file itself, and only while
// the path still names the file locked: two runs that start together on
// one log rotate it once, and the second appends to the new file instead
// of rotating that one over the history the first kept.
// restarted says the rotation failed and the log was emptied instead.
func openRotated(path string) (f *os.File, restarted bool, err error) {
	for range 3 {
		f, fi, err := safefile.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640, logRules)
		if err != nil {
			return nil, false, err
		}
		unlockLog, err := lock.File(f)
		if err != nil {
			return f, false, nil // not rotated this time, but written to
		}
		now, err := f.Stat()
		if err != nil || now.Size() <= MaxLog {
			unlockLog()
			return f, false, nil
		}
		if cur, err := os.Lstat(path); err != nil || !os.SameFile(cur, fi) {
			// Another run rotated it while this one waited: open the new one.
			unlockLog()
			f.Close()
			continue
		}
		if err := os.Rename(path, path+".1"); err != nil {
			// <log>.1 is a directory, or the directory refuses renames:
			// start the log again rather than let it grow without bound.
			err := f.Truncate(0)
			unlockLog()
			return f, err == nil, nil
		}
		unlockLog()
		f.Close()
	}
	return nil, false, &fs.PathError{Op: "rotate", Path: path, Err: errors.New("the log keeps changing")}
}
