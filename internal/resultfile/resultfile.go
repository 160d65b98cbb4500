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

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
)

// Finding is the result of inspecting the result file: the state found
// there, in the words of the JSON summary and the outcome record. Code is
// set only when State is outcome.FileUsed.
type Finding struct {
	State outcome.FileState
	Code  codes.Code
}

// The trust rules: a regular file, not a symlink, at most 64 KiB, owned by
// the effective user (or root) and not writable by group or others, this
// attempt's (see Before.Inspect, else stale), then a valid schema-1
// document naming a registered ctrld failure. Opening never blocks: a FIFO
// is rejected before it is opened, and the open itself is non-blocking in
// case one is swapped in.

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

// Inspect examines the result file at the path of the snapshot under the
// trust rules. A file is
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
			return Finding{State: outcome.FileAbsent}
		}
		return Finding{State: outcome.FileUntrusted}
	}
	if !fi.Mode().IsRegular() {
		return Finding{State: outcome.FileUntrusted}
	}
	f, ofi, err := safefile.Open(path, safefile.Rules{Owner: safefile.Self(), Private: true})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Finding{State: outcome.FileAbsent}
		}
		return Finding{State: outcome.FileUntrusted}
	}
	defer f.Close()
	if !os.SameFile(fi, ofi) || ofi.Size() > parse.MaxResultFileSize {
		return Finding{State: outcome.FileUntrusted}
	}
	if !fresh(ofi) {
		return Finding{State: outcome.FileStale}
	}
	c, err := parse.ResultFile(f)
	if err != nil {
		if errors.Is(err, parse.ErrResultTooLarge) {
			return Finding{State: outcome.FileUntrusted}
		}
		return Finding{State: outcome.FileInvalid}
	}
	return Finding{State: outcome.FileUsed, Code: c}
}
