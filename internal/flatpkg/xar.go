package flatpkg

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"encoding/xml"
	"time"
)

// A flat package is a xar archive: a 28-byte header, the table of contents
// (XML, zlib-compressed), then the heap: the TOC's SHA-1 first, each
// file's bytes after it. The TOC gives every file's offset in the heap and
// the SHA-1 of its bytes as stored and as extracted; productsign later adds
// a signature to the same structure.

const (
	xarMagic      = 0x78617221 // "xar!"
	xarHeaderSize = 28
	xarSHA1       = 1
)

// xarNode is a file or a directory of the archive.
type xarNode struct {
	name     string
	data     []byte    // a file's bytes, stored as they are
	children []xarNode // a directory's entries; nil for a file
	dir      bool
}

func xarFile(name string, data []byte) xarNode { return xarNode{name: name, data: data} }

func xarDir(name string, children ...xarNode) xarNode {
	return xarNode{name: name, children: children, dir: true}
}

type xarChecksum struct {
	Style string `xml:"style,attr"`
	Value string `xml:",chardata"`
}

type xarEncoding struct {
	Style string `xml:"style,attr"`
}

type xarData struct {
	Length            int         `xml:"length"`
	Offset            int         `xml:"offset"`
	Size              int         `xml:"size"`
	Encoding          xarEncoding `xml:"encoding"`
	ArchivedChecksum  xarChecksum `xml:"archived-checksum"`
	ExtractedChecksum xarChecksum `xml:"extracted-checksum"`
}

type xarTOCFile struct {
	ID    int          `xml:"id,attr"`
	Name  string       `xml:"name"`
	Type  string       `xml:"type"`
	Mode  string       `xml:"mode"`
	UID   int          `xml:"uid"`
	User  string       `xml:"user"`
	GID   int          `xml:"gid"`
	Group string       `xml:"group"`
	MTime string       `xml:"mtime"`
	Data  *xarData     `xml:"data,omitempty"`
	Files []xarTOCFile `xml:"file"`
}

type xarTOCChecksum struct {
	Style  string `xml:"style,attr"`
	Offset int    `xml:"offset"`
	Size   int    `xml:"size"`
}

type xarTOC struct {
	XMLName xml.Name `xml:"xar"`
	TOC     struct {
		CreationTime string         `xml:"creation-time"`
		Checksum     xarTOCChecksum `xml:"checksum"`
		Files        []xarTOCFile   `xml:"file"`
	} `xml:"toc"`
}

func sha1hex(b []byte) string {
	h := sha1.Sum(b)
	return hex.EncodeToString(h[:])
}

// writeXar returns the archive of nodes, in their order, every entry
// root:wheel with mtime.
func writeXar(nodes []xarNode, mtime time.Time) ([]byte, error) {
	stamp := mtime.UTC().Format("2006-01-02T15:04:05Z")
	var toc xarTOC
	toc.TOC.CreationTime = stamp
	toc.TOC.Checksum = xarTOCChecksum{Style: "sha1", Offset: 0, Size: sha1.Size}
	heap := make([]byte, sha1.Size) // the TOC's checksum, filled in below
	id := 0
	var walk func(n xarNode) xarTOCFile
	walk = func(n xarNode) xarTOCFile {
		id++
		f := xarTOCFile{ID: id, Name: n.name, UID: 0, User: "root", GID: 0, Group: "wheel", MTime: stamp}
		if n.dir {
			f.Type, f.Mode = "directory", "0755"
			for _, c := range n.children {
				f.Files = append(f.Files, walk(c))
			}
			return f
		}
		sum := sha1hex(n.data)
		f.Type, f.Mode = "file", "0644"
		f.Data = &xarData{
			Length: len(n.data), Offset: len(heap), Size: len(n.data),
			Encoding:          xarEncoding{Style: "application/octet-stream"},
			ArchivedChecksum:  xarChecksum{Style: "sha1", Value: sum},
			ExtractedChecksum: xarChecksum{Style: "sha1", Value: sum},
		}
		heap = append(heap, n.data...)
		return f
	}
	for _, n := range nodes {
		toc.TOC.Files = append(toc.TOC.Files, walk(n))
	}
	x, err := xml.MarshalIndent(toc, "", " ")
	if err != nil {
		return nil, err
	}
	plain := append([]byte(xml.Header), x...)
	plain = append(plain, '\n')
	var z bytes.Buffer
	zw, err := zlib.NewWriterLevel(&z, zlib.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(plain); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	tocSum := sha1.Sum(z.Bytes())
	copy(heap, tocSum[:])

	be := binary.BigEndian
	out := make([]byte, xarHeaderSize, xarHeaderSize+z.Len()+len(heap))
	be.PutUint32(out[0:], xarMagic)
	be.PutUint16(out[4:], xarHeaderSize)
	be.PutUint16(out[6:], 1) // version
	be.PutUint64(out[8:], uint64(z.Len()))
	be.PutUint64(out[16:], uint64(len(plain)))
	be.PutUint32(out[24:], xarSHA1)
	out = append(out, z.Bytes()...)
	out = append(out, heap...)
	return out, nil
}
