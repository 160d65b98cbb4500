package lock

import (
	"os"
	"path/filepath"
)

// Held reports whether a process holds the lock in dir: a try that does
// not wait. A missing lock file is not held, and is not created.
func Held(dir string) bool {
	f, err := os.Open(filepath.Join(dir, FileName))
	if err != nil {
		return false
	}
	defer f.Close()
	ok, err := tryLock(f)
	return err == nil && !ok
}
