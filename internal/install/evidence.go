package install

import (
	"io"
	"os"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/resultfile"
)

type resultFinding struct {
	state outcome.FileState
	code  codes.Code
}

var resultStates = map[resultfile.Status]outcome.FileState{
	resultfile.Absent:    outcome.FileAbsent,
	resultfile.Used:      outcome.FileUsed,
	resultfile.Stale:     outcome.FileStale,
	resultfile.Untrusted: outcome.FileUntrusted,
	resultfile.Invalid:   outcome.FileInvalid,
}

func inspectResultFile(before resultfile.Before) resultFinding {
	f := before.Inspect()
	return resultFinding{state: resultStates[f.Status], code: f.Code}
}

// maxServiceLog bounds what is read of the daemon's log per run: the
// cause is in the first lines the daemon writes.
const maxServiceLog = 1 << 20

// logMark is a daemon log as it was before ctrld start.
type logMark struct {
	path   string
	exists bool
	size   int64
	ino    fileID
}

// snapshotLogs notes the size and identity of each daemon log, so that
// afterwards only what the daemon appended during this run is read.
func snapshotLogs(paths []string) []logMark {
	marks := make([]logMark, 0, len(paths))
	for _, p := range paths {
		m := logMark{path: p}
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			m.exists, m.size, m.ino = true, fi.Size(), identity(fi)
		}
		marks = append(marks, m)
	}
	return marks
}

// readLogs reads what each log gained since its mark, through the same
// classifier as ctrld's output, and returns what was found and the first
// specific cause. A log that is a link, not a regular file, or shrank or
// was replaced (rotated) during the run is ignored. Nothing read is kept.
func readLogs(marks []logMark) (outcome.FileState, *codes.Code) {
	if len(marks) == 0 {
		return outcome.FileNone, nil
	}
	var read, untrusted bool
	for _, m := range marks {
		c, st := readLog(m)
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

func readLog(m logMark) (*codes.Code, outcome.FileState) {
	f, fi, err := openLog(m.path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, outcome.FileAbsent
		}
		return nil, outcome.FileUntrusted
	}
	defer f.Close()
	start := int64(0)
	if m.exists {
		if identity(fi) != m.ino || fi.Size() < m.size {
			return nil, outcome.FileUntrusted
		}
		start = m.size
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return nil, outcome.FileUntrusted
	}
	if c, ok := parse.ClassifyServiceLog(io.LimitReader(f, maxServiceLog)); ok {
		return &c, outcome.FileUsed
	}
	return nil, outcome.FileRead
}
