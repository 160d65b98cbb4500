// Package resultfile decides whether the result file ctrld wrote can be
// trusted, and reads it when it can. The file lives in a directory other
// users may be able to write to on a misconfigured machine, and ctrld-install
// runs as root, so every property is checked on the opened descriptor before
// one byte is parsed.
package resultfile

import (
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
)

// Status is what was found at the result file path. The values are the
// words of the JSON summary and the outcome record.
type Status string

const (
	Absent    Status = "absent"    // no file: the usual case for success and for released ctrld
	Used      Status = "used"      // trusted, fresh and valid: it decides the outcome
	Stale     Status = "stale"     // trusted and valid in form, but older than this run
	Untrusted Status = "untrusted" // not a regular file, wrong owner or mode, or too large
	Invalid   Status = "invalid"   // trusted and fresh, but not a registered ctrld failure
)

// Finding is the result of inspecting the result file. Code is set only
// when Status is Used.
type Finding struct {
	Status Status
	Code   codes.Code
}

// Inspect examines the result file at path for a run that started at since.
//
// Trust rules: a regular file, not a symlink, at most 64 KiB, owned by the
// effective user and not writable by group or others, modified no earlier
// than the start of the second the run began in (file systems such as
// HFS+ keep whole seconds only), not older than that (else stale), then a valid schema-1 document naming a
// registered ctrld failure. Opening never blocks: a FIFO is rejected before
// it is opened, and the open itself is non-blocking in case one is swapped in.
func Inspect(path string, since time.Time) Finding {
	fi, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
			return Finding{Status: Absent}
		}
		return Finding{Status: Untrusted}
	}
	if !fi.Mode().IsRegular() {
		return Finding{Status: Untrusted}
	}
	f, err := openNoFollow(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Finding{Status: Absent}
		}
		return Finding{Status: Untrusted}
	}
	defer f.Close()
	ofi, err := f.Stat()
	if err != nil || !ofi.Mode().IsRegular() || !os.SameFile(fi, ofi) {
		return Finding{Status: Untrusted}
	}
	if ofi.Size() > parse.MaxResultFileSize || !ownedBySelf(ofi) || ofi.Mode().Perm()&0o022 != 0 {
		return Finding{Status: Untrusted}
	}
	if ofi.ModTime().Before(since.Truncate(time.Second)) {
		return Finding{Status: Stale}
	}
	c, err := parse.ResultFile(f)
	if err != nil {
		if errors.Is(err, parse.ErrResultTooLarge) {
			return Finding{Status: Untrusted}
		}
		return Finding{Status: Invalid}
	}
	return Finding{Status: Used, Code: c}
}
