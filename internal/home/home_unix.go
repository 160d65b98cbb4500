//go:build unix

package home

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
)

const ownerWords = "root"

func isReparsePoint(fs.FileInfo) bool { return false }

func (c Checker) checkOwnerAndMode(_ string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ErrUnreadable
	}
	if int(st.Uid) != c.UID {
		return ErrNotOwned
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return ErrWritable
	}
	return nil
}

// mkdirAll creates dir and its missing parents 0755. The mode is set after
// each mkdir because the umask may have taken bits away: status, run by
// any user, must be able to reach the record inside.
func mkdirAll(dir string) error {
	var missing []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		p := missing[i]
		if err := os.Mkdir(p, 0o755); err != nil {
			// Another process made it first; Check judges the result.
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			return err
		}
		if err := chmodDir(p); err != nil {
			return err
		}
	}
	return nil
}

// chmodDir sets 0755 on the directory it opens without following a link,
// so a directory swapped for a link since the mkdir is not what changes.
func chmodDir(p string) error {
	d, err := safefile.OpenDir(p)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Chmod(0o755)
}
