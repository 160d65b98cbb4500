package support

import (
	"io/fs"
	"os"
	"path/filepath"
)

// ReadPath counts the outcomes in path: one file, or every regular file
// under a directory, in lexical order. path itself is followed if it is a
// symbolic link, as a name typed on a command line should be (and as
// /var on macOS is); links met inside a directory are not followed, and
// devices, sockets and FIFOs there are skipped, so a walk neither escapes
// the tree nor blocks. Files that cannot be read are counted in
// Stats.Unreadable. The error is for path itself.
func (c *Counter) ReadPath(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		f, err := os.Open(path)
		if err != nil {
			c.Unreadable()
			return nil
		}
		defer f.Close()
		c.Read(f)
		return nil
	}
	// WalkDir does not follow a root that is itself a link.
	root, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			c.Unreadable()
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		f, err := openRegular(p)
		if err != nil {
			c.Unreadable()
			return nil
		}
		defer f.Close()
		c.Read(f)
		return nil
	})
}
