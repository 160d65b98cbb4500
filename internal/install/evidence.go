package install

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
)

// maxServiceLog bounds what is read of the daemon's log per run: the
// cause is in the first lines the daemon writes.
const maxServiceLog = 1 << 20

// logMark is a daemon log as it was before ctrld start.
type logMark struct {
	path   string
	exists bool
	size   int64
	ino    safefile.ID
	// unknown: the log could not be examined before the run; nothing in
	// it is proven to be this run's.
	unknown bool
}

// snapshotLogs notes the size and identity of each daemon log, so that
// afterwards only what the daemon appended during this run is read. A log
// on a mount that does not answer is given up with ctx: it is then read
// from its start, and the size check afterwards refuses nothing it should
// not.
func snapshotLogs(ctx context.Context, paths []string) []logMark {
	marks := make([]logMark, 0, len(paths))
	for _, p := range paths {
		m := logMark{path: p}
		done := make(chan logMark, 1)
		// Ends when Lstat returns; a mount that does not answer leaves it
		// there, abandoned when ctx ends, until the process ends.
		go func() {
			m := m
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
				m.exists, m.size, m.ino = true, fi.Size(), safefile.IDOf(fi)
			}
			done <- m
		}()
		select {
		case m = <-done:
		case <-ctx.Done():
			m.unknown = true
		}
		marks = append(marks, m)
	}
	return marks
}

// readLogs reads what each log gained since its mark, through the same
// classifier as ctrld's output, and returns what was found and the first
// specific cause. A log that is a link, not a regular file, or shrank or
// was replaced (rotated) during the run is ignored. Nothing read is kept.
func readLogs(ctx context.Context, marks []logMark) (outcome.FileState, *codes.Code) {
	if len(marks) == 0 {
		return outcome.FileNone, nil
	}
	var read, untrusted bool
	for _, m := range marks {
		c, st := readLog(ctx, m)
		if c != nil {
			return outcome.FileUsed, c
		}
		read = read || st == outcome.FileRead
		untrusted = untrusted || st == outcome.FileUntrusted
	}
	switch {
	case read:
		return outcome.FileRead, nil
	case untrusted:
		return outcome.FileUntrusted, nil
	}
	return outcome.FileAbsent, nil
}

// serviceLogRules are the result file's: a daemon log a user could write
// would let that user choose the outcome.
var serviceLogRules = safefile.Rules{Owner: safefile.Self(), Private: true}

// readLog reads one log under the result file's trust rules (owned by
// root or the running user, not writable by group or others: a user who
// could write it would choose the outcome), bounded by ctx: a log whose
// read blocks (a stalled mount, a procfs file) is given up, as untrusted.
func readLog(ctx context.Context, m logMark) (*codes.Code, outcome.FileState) {
	if m.unknown {
		return nil, outcome.FileUntrusted
	}
	type found struct {
		code  *codes.Code
		state outcome.FileState
	}
	var res found
	err := safefile.OpenContext(ctx, m.path, serviceLogRules, func(f *os.File, fi fs.FileInfo) error {
		res = scanLog(m, f, fi)
		return nil
	})
	switch {
	case err == nil:
		return res.code, res.state
	case errors.Is(err, fs.ErrNotExist):
		return nil, outcome.FileAbsent
	}
	return nil, outcome.FileUntrusted
}

func scanLog(m logMark, f *os.File, fi fs.FileInfo) (r struct {
	code  *codes.Code
	state outcome.FileState
}) {
	start := int64(0)
	if m.exists {
		if safefile.IDOf(fi) != m.ino || fi.Size() < m.size {
			r.state = outcome.FileUntrusted
			return r
		}
		start = m.size
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		r.state = outcome.FileUntrusted
		return r
	}
	if c, ok := parse.ClassifyServiceLog(io.LimitReader(f, maxServiceLog)); ok {
		r.code, r.state = &c, outcome.FileUsed
		return r
	}
	r.state = outcome.FileRead
	return r
}
