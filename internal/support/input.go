package support

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"strconv"
	"strings"
)

// ErrNotFile is returned for a named input that is neither a regular file
// nor a directory: a FIFO, a device or a socket, which could block the
// read or never end. Standard input ("-") is the way to pipe a stream in.
var ErrNotFile = errors.New("support: not a regular file or directory")

// CheckPath reports whether path can be read as an argument of summarize:
// it exists (a link is followed) and is a regular file or a directory.
func CheckPath(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() && !fi.Mode().IsRegular() {
		return ErrNotFile
	}
	return nil
}

// ReadPath counts the outcomes in one argument of summarize.
//
// A file is one device, named by its file name. In a directory, every
// directory directly under it is one device, named by its folder name,
// whose inputs are all the regular files under it (its logs, rotated logs
// and records); every regular file directly under it is a device of its
// own, as if it had been named. Files are read in lexical order.
//
// path itself is followed if it is a symbolic link, as a name typed on a
// command line should be (and as /var on macOS is); links met inside a
// directory are not followed, and devices, sockets and FIFOs there are
// skipped, so a walk neither escapes the tree nor blocks. A named file is
// opened without blocking and read only if it is a regular file. Files
// that cannot be read are counted in Stats.Unreadable. The error is for
// path itself, or the counter's context.
func (c *Counter) ReadPath(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() {
			return ErrNotFile
		}
		f, err := openNamed(path)
		if err != nil {
			c.Unreadable()
			return nil
		}
		defer f.Close()
		c.ReadDevice(filepath.Base(path), rotationGen(filepath.Base(path)), f)
		return c.ctx.Err()
	}
	// WalkDir does not follow a root that is itself a link.
	root, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		c.Unreadable()
		return nil
	}
	for _, e := range entries {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		p := filepath.Join(root, e.Name())
		switch {
		case e.Type().IsRegular():
			c.readFile(e.Name(), p)
		case e.IsDir():
			c.device(e.Name())
			c.walkDevice(e.Name(), p)
		}
	}
	return c.ctx.Err()
}

// walkDevice reads every regular file under dir as an input of the device
// called name.
func (c *Counter) walkDevice(name, dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if cerr := c.ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			c.Unreadable()
			return nil
		}
		if d.Type().IsRegular() {
			c.readFile(name, p)
		}
		return nil
	})
}

func (c *Counter) readFile(device, p string) {
	f, err := openRegular(p)
	if err != nil {
		c.Unreadable()
		return
	}
	defer f.Close()
	c.ReadDevice(device, rotationGen(filepath.Base(p)), f)
}

// ReadStream counts standard input: one input of the device "-".
func (c *Counter) ReadStream(r io.Reader) error {
	if err := c.ReadDevice("-", 0, r); err != nil {
		return c.ctx.Err()
	}
	return nil
}

// rotationGen is how many rotations old a file is by its name: 0 for
// "install.log", then "install.log.0" (newsyslog's newest) 1, ".1" 2 and so
// on, with or without ".gz"; a ".gz" without a number is 1. Only the order
// matters: it ranks a device's undated outcomes and those of one second.
func rotationGen(name string) int {
	name, gz := strings.CutSuffix(name, ".gz")
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		if n, err := strconv.Atoi(name[i+1:]); err == nil && n >= 0 && n < 1000 && !strings.HasPrefix(name[i+1:], "+") {
			return n + 1
		}
	}
	if gz {
		return 1
	}
	return 0
}
