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

// Inspect examines the result file at path for a run that started at since,
// judging freshness by the modification time alone. A file left from an
// earlier run but dated in the future (the clock was corrected since) passes
// for fresh: use Snapshot before ctrld starts and Before.Inspect after.
//
// Trust rules: a regular file, not a symlink, at most 64 KiB, owned by the
// effective user and not writable by group or others, modified no earlier
// than the start of the second the run began in (file systems such as
// HFS+ keep whole seconds only), not older than that (else stale), then a valid schema-1 document naming a
// registered ctrld failure. Opening never blocks: a FIFO is rejected before
// it is opened, and the open itself is non-blocking in case one is swapped in.
func Inspect(path string, since time.Time) Finding {
	return inspect(path, func(fi fs.FileInfo) bool {
		return !fi.ModTime().Before(since.Truncate(time.Second))
	})
}

// Before is what was at the result file's path before an attempt started.
// The zero Before is a path that held nothing.
type Before struct {
	path  string
	state beforeState
	fi    fs.FileInfo // when state is existed
}

type beforeState int

const (
	wasAbsent beforeState = iota
	existed
	unknown // the path could not be examined
)

// Snapshot records what is at path now: nothing, or which file with which
// size and times. It never opens the path, so it cannot block.
func Snapshot(path string) Before {
	fi, err := os.Lstat(path)
	switch {
	case err == nil:
		pinIdentity(fi)
		return Before{path: path, state: existed, fi: fi}
	case errors.Is(err, fs.ErrNotExist) || isNotDir(err):
		return Before{path: path, state: wasAbsent}
	}
	return Before{path: path, state: unknown}
}

// Inspect examines the result file at the path of the snapshot, with the
// trust rules of the package-level Inspect, except for freshness: a file is
// this attempt's evidence only if it was not there before, or is another
// file now (ctrld writes it with a rename), or was written since (size,
// modification or change time differ). Clocks play no part, so a file left
// from an earlier run is stale whatever its date, and a new file is fresh
// even if the clock went back. A path that could not be examined before
// counts as holding a file: nothing found there is proven new.
func (b Before) Inspect() Finding {
	return inspect(b.path, b.changed)
}

func (b Before) changed(now fs.FileInfo) bool {
	switch b.state {
	case wasAbsent:
		return true
	case unknown:
		return false
	}
	return !os.SameFile(b.fi, now) ||
		b.fi.Size() != now.Size() ||
		!b.fi.ModTime().Equal(now.ModTime()) ||
		changeTime(b.fi) != changeTime(now)
}

// inspect applies the trust rules, then fresh, then parses.
func inspect(path string, fresh func(fs.FileInfo) bool) Finding {
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
	if !fresh(ofi) {
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
