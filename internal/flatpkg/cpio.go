package flatpkg

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
)

// entry is one file or directory of a payload or of the scripts, with its
// place in the tree already decided.
type entry struct {
	name string // "." or "./a/b"
	dir  bool
	mode uint32 // permission bits only
	data []byte
}

// tree returns files and every directory above them as entries, "." first
// and then by name, so the archive's order never depends on the caller's.
func tree(files []File) ([]entry, error) {
	seen := map[string]bool{}
	var out []entry
	add := func(e entry) { seen[e.name] = true; out = append(out, e) }
	add(entry{name: ".", dir: true, mode: 0o755})
	for _, f := range files {
		clean := path.Clean(f.Path)
		if f.Path == "" || clean != f.Path || path.IsAbs(clean) || clean == "." || strings.HasPrefix(clean, "../") || clean == ".." {
			return nil, fmt.Errorf("the path %q is not a clean relative path", f.Path)
		}
		name := "./" + clean
		if seen[name] {
			return nil, fmt.Errorf("the path %q is given twice", f.Path)
		}
		for d := path.Dir(clean); d != "."; d = path.Dir(d) {
			if !seen["./"+d] {
				add(entry{name: "./" + d, dir: true, mode: 0o755})
			}
		}
		add(entry{name: name, mode: uint32(f.Mode.Perm()), data: f.Data})
	}
	slices.SortFunc(out, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	for i := 1; i < len(out); i++ {
		if !out[i-1].dir && strings.HasPrefix(out[i].name, out[i-1].name+"/") {
			return nil, fmt.Errorf("%q is both a file and a directory", out[i-1].name)
		}
	}
	return out, nil
}

const (
	modeDir  = 0o040000
	modeFile = 0o100000
)

func (e entry) fullMode() uint32 {
	if e.dir {
		return modeDir | e.mode
	}
	return modeFile | e.mode
}

// cpioODC writes entries in the portable ASCII ("odc", magic 070707)
// format, the one pkgbuild writes and Installer reads: every file owned by
// root:wheel (0:0), every time mtime.
func cpioODC(entries []entry, mtime int64) []byte {
	var b bytes.Buffer
	header := func(ino int, mode uint32, nlink int, name string, size int) {
		fmt.Fprintf(&b, "070707%06o%06o%06o%06o%06o%06o%06o%011o%06o%011o",
			0, ino, mode, 0, 0, nlink, 0, mtime, len(name)+1, size)
		b.WriteString(name)
		b.WriteByte(0)
	}
	for i, e := range entries {
		nlink := 1
		if e.dir {
			nlink = 2
		}
		header(i+1, e.fullMode(), nlink, e.name, len(e.data))
		b.Write(e.data)
	}
	header(0, 0, 1, "TRAILER!!!", 0)
	return b.Bytes()
}

// gzipped compresses b with a header that holds no time and no name.
func gzipped(b []byte) ([]byte, error) {
	var out bytes.Buffer
	w, err := gzip.NewWriterLevel(&out, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func gunzip(b []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}
