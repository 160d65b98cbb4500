package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"

	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
)

// Build says which ctrld build the kept copy is: its hash, and the size
// and time of the file it was copied from, so that a run tells without
// reading the binary whether the file on disk is still that build.
type Build struct {
	Version int    `json:"version"`
	Size    int64  `json:"size"`
	ModNS   int64  `json:"mod_ns"`
	SHA256  string `json:"sha256"`
	Ctrld   string `json:"ctrld_version,omitempty"` // as parse.DisplayVersion writes it
}

// KeptBuild reads what the kept copy is; ok only while a copy the rules
// allow is there with that size.
func KeptBuild(home string) (Build, bool) {
	var b Build
	if !Read(home, KeptInfo, &b) || b.Version != 1 || b.SHA256 == "" {
		return Build{}, false
	}
	f, fi, err := safefile.Open(filepath.Join(home, KeptBinary), Private)
	if err != nil {
		return Build{}, false
	}
	f.Close()
	return b, fi.Size() == b.Size
}

// Is reports whether the file at path is b by its size and time.
func (b Build) Is(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Size() == b.Size && fi.ModTime().UnixNano() == b.ModNS
}

// Keep copies the build at src into the home as the kept build, hashing
// it as it copies, within ctx. onDisk says src is the file at ctrld's path,
// whose size and time then say it is this build; a copy from elsewhere (the
// running daemon's /proc/PID/exe) is never taken for the file on disk.
func Keep(ctx context.Context, home, src string, onDisk bool, version string) (Build, error) {
	f, fi, err := safefile.Open(src, safefile.Rules{Follow: true, Owner: safefile.AnyOwner})
	if err != nil {
		return Build{}, err
	}
	defer f.Close()
	b := Build{Version: 1, Size: fi.Size(), Ctrld: version}
	if onDisk {
		b.ModNS = fi.ModTime().UnixNano()
	}
	h := sha256.New()
	err = WriteWith(home, KeptBinary, func(w io.Writer) error {
		_, err := CopyWithin(ctx, io.MultiWriter(w, h), f)
		return err
	}, 0o700)
	if err != nil {
		return Build{}, err
	}
	b.SHA256 = hex.EncodeToString(h.Sum(nil))
	return b, Write(home, KeptInfo, b)
}

// ErrNoBuild: no kept copy is that build.
var ErrNoBuild = errors.New("no kept build")

// Restore puts the kept build whose hash is want back at path (the file a
// link there names): copied beside it, then renamed over it, so the binary
// is never a partial copy. The copy is hashed as it is made: a kept file
// changed since it was kept is not restored. replaced is the hash of the
// file it replaced, "" when that could not be read.
func Restore(ctx context.Context, home, want, path string) (replaced string, err error) {
	b, ok := KeptBuild(home)
	if !ok || b.SHA256 != want {
		return "", ErrNoBuild
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		target = path
	}
	src, _, err := safefile.Open(filepath.Join(home, KeptBinary), Private)
	if err != nil {
		return "", err
	}
	defer src.Close()
	replaced, _ = FileSHA256(ctx, target)
	tmp, err := TempName(filepath.Dir(target))
	if err != nil {
		return replaced, err
	}
	dst, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return replaced, err
	}
	h := sha256.New()
	_, err = CopyWithin(ctx, io.MultiWriter(dst, h), src)
	if err == nil && hex.EncodeToString(h.Sum(nil)) != want {
		err = errors.New("the kept build changed")
	}
	if err == nil {
		err = dst.Chmod(0o755)
	}
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, target)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return replaced, err
}
