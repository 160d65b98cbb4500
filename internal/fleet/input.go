package fleet

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/Control-D-Inc/ctrld-install/internal/parse"
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
		c.readOwn(filepath.Base(path), rotationGen(filepath.Base(path)), f)
		return c.ctx.Err()
	}
	// WalkDir does not follow a root that is itself a link.
	root, err := filepath.EvalSymlinks(path)
	if err != nil {
		return err
	}
	entries, err := readDir(root)
	if err != nil {
		c.Unreadable()
	}
	return c.readEntries(root, entries)
}

// dirEntry is what a walk needs of a directory entry.
type dirEntry struct {
	name         string
	dir, regular bool
}

// readDir is os.ReadDir, sorted by name, keeping only names and kinds: a
// fleet's folder has a hundred thousand entries, and os.ReadDir's hold
// four times the memory, for the whole walk.
func readDir(dir string) ([]dirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []dirEntry
	for {
		batch, err := f.ReadDir(1024)
		for _, e := range batch {
			t := e.Type()
			out = append(out, dirEntry{name: e.Name(), dir: t.IsDir(), regular: t.IsRegular()})
		}
		if err == io.EOF || len(batch) == 0 {
			break
		}
		if err != nil {
			sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
			return out, err
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// readEntries counts the entries of a fleet's folder (see ReadPath), one
// at a time in the order of a plain walk. Reading ahead on goroutines
// once saved a second or two of a 100,000-device summary; that is below
// what a person waiting for the report notices, and not worth a second
// reader of files beside safefile.
func (c *Counter) readEntries(root string, entries []dirEntry) error {
	for _, e := range entries {
		if err := c.ctx.Err(); err != nil {
			return err
		}
		p := filepath.Join(root, e.name)
		switch {
		case e.dir:
			c.device(e.name)
			c.walkDevice(e.name, p)
		case e.regular:
			// A file directly under the folder is a device of its own.
			c.own = true
			c.readFile(e.name, p)
			c.own = false
		}
	}
	return c.ctx.Err()
}

// walkDevice reads every regular file under a device's folder.
func (c *Counter) walkDevice(device, dir string) {
	entries, err := readDir(dir)
	if err != nil {
		c.Unreadable()
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.name)
		switch {
		case e.regular:
			c.readFile(device, p)
		case e.dir:
			c.walkDevice(device, p)
		}
	}
}

func (c *Counter) readFile(device, p string) {
	f, fi, err := openRegularInfo(p)
	if err != nil {
		c.Unreadable()
		return
	}
	defer f.Close()
	// Read what the file held when it was opened: that needs no last read
	// to find its end, and a log still being written is read as it was.
	c.ReadDevice(device, rotationGen(filepath.Base(p)), io.LimitReader(f, fi.Size()))
}

// ReadStream counts standard input: one input of the device "-".
func (c *Counter) ReadStream(r io.Reader) error {
	if err := c.readOwn("-", 0, r); err != nil {
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
	if i := strings.LastIndexByte(name, '.'); i >= 0 && i+1 < len(name) && name[i+1] >= '0' && name[i+1] <= '9' {
		if n, err := strconv.Atoi(name[i+1:]); err == nil && n >= 0 && n < 1000 && !strings.HasPrefix(name[i+1:], "+") {
			return n + 1
		}
	}
	if gz {
		return 1
	}
	return 0
}

// CSVColumns names the columns of an inventory export (a CSV file from
// Jamf, Intune or an RMM) that summarize reads.
type CSVColumns struct {
	// Code is the column holding each device's value: a bare code or
	// state word, a <result> value, or ctrld-install's whole last line
	// (or lines).
	Code string
	// Device is the column naming the device; "" takes the first column
	// whose header is one of DeviceColumns.
	Device string
}

// DeviceColumns are the headers taken as the device's name when no device
// column is named, in order of preference: what Jamf Pro ("Computer Name"),
// Intune ("Device name", "Device") and RMM exports call it.
var DeviceColumns = []string{"Computer Name", "Device name", "Device", "Display Name", "System Name", "Hostname", "Host Name", "Computer", "Name"}

// ErrNoColumn is returned when the header of a CSV export has no column
// of the name given.
var ErrNoColumn = errors.New("support: the CSV header has no such column")

// ReadCSV counts an inventory export: every row after the header is one
// device, named by its device column (or "(row N)" without one), whose
// value in the code column is read as an input of its own, as if it were
// a file of the device. Headers match without regard to case or the
// blanks around them. A device named in two rows is one device, the
// later row its newer outcome. The file may be gzip-compressed or UTF-16,
// like any input.
func (c *Counter) ReadCSV(r io.Reader, cols CSVColumns) error {
	raw := bufio.NewReaderSize(ctxReader{c.ctx, r}, 32<<10)
	var src io.Reader = raw
	if magic, _ := raw.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(raw)
		if err != nil {
			return err
		}
		src = gz
	}
	cr := csv.NewReader(parse.NewTextReader(bufio.NewReaderSize(src, 32<<10)))
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return ErrNoColumn
		}
		return err
	}
	find := func(name string) int {
		for i, h := range header {
			if strings.EqualFold(strings.TrimSpace(h), strings.TrimSpace(name)) {
				return i
			}
		}
		return -1
	}
	code := find(cols.Code)
	if code < 0 {
		return ErrNoColumn
	}
	dev := -1
	if cols.Device != "" {
		if dev = find(cols.Device); dev < 0 {
			return ErrNoColumn
		}
	} else {
		for _, name := range DeviceColumns {
			if dev = find(name); dev >= 0 && dev != code {
				break
			}
			dev = -1
		}
	}
	var cell strings.Reader
	for {
		c.csvRows++
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := ""
		if dev >= 0 && dev < len(rec) {
			name = strings.TrimSpace(rec[dev])
		}
		if name == "" {
			// Numbered across every export read, so two files' unnamed
			// rows stay two devices.
			name = "(row " + strconv.Itoa(c.csvRows) + ")"
		}
		value := ""
		if code < len(rec) {
			value = rec[code]
		}
		cell.Reset(value)
		if err := c.ReadDevice(name, 0, &cell); err != nil {
			return err
		}
	}
}

// IsDir reports whether path is a directory (a link to one included).
func IsDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// ReadCSVPath counts the inventory export in the file at path (see
// ReadCSV). A file that cannot be opened is counted as unreadable.
func (c *Counter) ReadCSVPath(path string, cols CSVColumns) error {
	f, err := openNamed(path)
	if err != nil {
		c.Unreadable()
		return nil
	}
	defer f.Close()
	if err := c.ReadCSV(f, cols); err != nil {
		if errors.Is(err, ErrNoColumn) {
			return err
		}
		c.Unreadable()
	}
	return c.ctx.Err()
}
