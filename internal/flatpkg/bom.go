package flatpkg

import (
	"encoding/binary"
	"path"
)

// A Bom ("bill of materials") lists what a component package installs:
// Installer reads it to lay the payload and to write the receipt that
// pkgutil --files shows. It is a BOMStore: a 512-byte header, then
// numbered blocks, a table of their offsets and a list of named blocks
// ("variables"). Integers are big-endian. The variables an installer Bom
// holds are BomInfo, Paths (a B-tree of the paths, keyed by parent and
// name), HLIndex (hard links), VIndex and Size64, the last three empty
// here. The layout follows what pkgbuild and mkbom write; no public
// specification exists.

type bomStore struct {
	blocks [][]byte // block i+1; block 0 is the null block
	vars   []bomVar
}

type bomVar struct {
	name  string
	block uint32
}

func (s *bomStore) add(b []byte) uint32 {
	s.blocks = append(s.blocks, b)
	return uint32(len(s.blocks))
}

func (s *bomStore) addVar(name string, b []byte) {
	s.vars = append(s.vars, bomVar{name, s.add(b)})
}

func (s *bomStore) bytes() []byte {
	be := binary.BigEndian
	const headerSize = 512
	var vars []byte
	vars = be.AppendUint32(vars, uint32(len(s.vars)))
	for _, v := range s.vars {
		vars = be.AppendUint32(vars, v.block)
		vars = append(vars, byte(len(v.name)))
		vars = append(vars, v.name...)
	}
	var data []byte
	offsets := make([]uint32, len(s.blocks))
	for i, b := range s.blocks {
		offsets[i] = uint32(headerSize + len(vars) + len(data))
		data = append(data, b...)
	}
	var index []byte
	index = be.AppendUint32(index, uint32(len(s.blocks)+1))
	index = be.AppendUint64(index, 0) // the null block
	for i, b := range s.blocks {
		index = be.AppendUint32(index, offsets[i])
		index = be.AppendUint32(index, uint32(len(b)))
	}
	// An empty free list with room for two entries, as pkgbuild leaves it.
	index = be.AppendUint32(index, 0)
	index = append(index, make([]byte, 16)...)

	out := make([]byte, headerSize, headerSize+len(vars)+len(data)+len(index))
	copy(out, "BOMStore")
	be.PutUint32(out[8:], 1)
	be.PutUint32(out[12:], uint32(len(s.blocks)))
	be.PutUint32(out[16:], uint32(headerSize+len(vars)+len(data)))
	be.PutUint32(out[20:], uint32(len(index)))
	be.PutUint32(out[24:], headerSize)
	be.PutUint32(out[28:], uint32(len(vars)))
	out = append(out, vars...)
	out = append(out, data...)
	return append(out, index...)
}

// Path types of a Bom entry.
const (
	bomTypeFile = 1
	bomTypeDir  = 2
)

// leafCapacity is how many paths one leaf of the Paths tree holds.
const leafCapacity = 256

// bom returns the Bom of entries (as tree returns them, "." first).
func bom(entries []entry, mtime int64) []byte {
	be := binary.BigEndian
	s := &bomStore{}

	var info []byte
	info = be.AppendUint32(info, 1)                      // version
	info = be.AppendUint32(info, uint32(len(entries)+1)) // paths, plus one
	info = be.AppendUint32(info, 1)                      // one info entry
	info = append(info, make([]byte, 16)...)             // all zero
	s.addVar("BomInfo", info)

	// Ids in breadth-first order, children by name: the tree's keys
	// (parent id, name) are then in order.
	ordered := breadthFirst(entries)
	ids := map[string]uint32{}
	for i, e := range ordered {
		ids[e.name] = uint32(i + 1)
	}
	type index struct{ info1, file uint32 }
	var leaves [][]index
	for i, e := range ordered {
		var p2 []byte
		typ := byte(bomTypeFile)
		size := uint32(len(e.data))
		sum := cksum(e.data)
		if e.dir {
			typ, size, sum = bomTypeDir, 0, 0
		}
		p2 = append(p2, typ, 1)
		p2 = be.AppendUint16(p2, 3) // architecture, as mkbom writes it
		p2 = be.AppendUint16(p2, uint16(e.fullMode()))
		p2 = be.AppendUint32(p2, 0) // uid root
		p2 = be.AppendUint32(p2, 0) // gid wheel
		p2 = be.AppendUint32(p2, uint32(mtime))
		p2 = be.AppendUint32(p2, size)
		p2 = append(p2, 1)
		p2 = be.AppendUint32(p2, sum)
		p2 = be.AppendUint32(p2, 0) // no link name
		var p1 []byte
		p1 = be.AppendUint32(p1, uint32(i+1))
		p1 = be.AppendUint32(p1, s.add(p2))
		var parent uint32
		if e.name != "." {
			parent = ids[parentOf(e.name)]
		}
		var f []byte
		f = be.AppendUint32(f, parent)
		f = append(f, path.Base(e.name)...)
		f = append(f, 0)
		if i%leafCapacity == 0 {
			leaves = append(leaves, nil)
		}
		leaves[len(leaves)-1] = append(leaves[len(leaves)-1], index{s.add(p1), s.add(f)})
	}
	// The leaves, linked forward and backward; above several, one branch.
	leafIDs := make([]uint32, len(leaves))
	leafBytes := make([][]byte, len(leaves))
	for i, l := range leaves {
		var b []byte
		b = be.AppendUint16(b, 1) // a leaf
		b = be.AppendUint16(b, uint16(len(l)))
		b = be.AppendUint32(b, 0) // forward, set below
		b = be.AppendUint32(b, 0) // backward, set below
		for _, x := range l {
			b = be.AppendUint32(b, x.info1)
			b = be.AppendUint32(b, x.file)
		}
		leafBytes[i] = b
		leafIDs[i] = s.add(b)
	}
	for i, b := range leafBytes {
		if i+1 < len(leafIDs) {
			be.PutUint32(b[4:], leafIDs[i+1])
		}
		if i > 0 {
			be.PutUint32(b[8:], leafIDs[i-1])
		}
	}
	root := leafIDs[0]
	if len(leaves) > 1 {
		var b []byte
		b = be.AppendUint16(b, 0) // a branch
		b = be.AppendUint16(b, uint16(len(leaves)))
		b = be.AppendUint32(b, 0)
		b = be.AppendUint32(b, 0)
		for i, l := range leaves {
			b = be.AppendUint32(b, leafIDs[i])
			b = be.AppendUint32(b, l[len(l)-1].file)
		}
		root = s.add(b)
	}
	s.addVar("Paths", bomTree(root, 4096, uint32(len(entries))))

	empty := func() uint32 {
		var b []byte
		b = be.AppendUint16(b, 1)
		return s.add(append(b, make([]byte, 10)...))
	}
	s.addVar("HLIndex", bomTree(empty(), 4096, 0))
	vtree := s.add(bomTree(empty(), 128, 0))
	var vindex []byte
	vindex = be.AppendUint32(vindex, 1)
	vindex = be.AppendUint32(vindex, vtree)
	vindex = be.AppendUint32(vindex, 0)
	vindex = append(vindex, 0)
	s.addVar("VIndex", vindex)
	s.addVar("Size64", bomTree(empty(), 4096, 0))
	return s.bytes()
}

func bomTree(child, blockSize, count uint32) []byte {
	be := binary.BigEndian
	b := []byte("tree")
	b = be.AppendUint32(b, 1)
	b = be.AppendUint32(b, child)
	b = be.AppendUint32(b, blockSize)
	b = be.AppendUint32(b, count)
	return append(b, 0)
}

// breadthFirst orders entries by depth, then by name within each parent.
func breadthFirst(entries []entry) []entry {
	children := map[string][]entry{}
	var root entry
	for _, e := range entries {
		if e.name == "." {
			root = e
			continue
		}
		d := parentOf(e.name)
		children[d] = append(children[d], e) // entries come sorted by name
	}
	out := []entry{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i].name]...)
	}
	return out
}

var cksumTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i) << 24
		for range 8 {
			if c&0x80000000 != 0 {
				c = c<<1 ^ 0x04c11db7
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// cksum is the CRC of POSIX cksum, which a Bom keeps for each file and
// lsbom prints.
func cksum(b []byte) uint32 {
	var crc uint32
	for _, c := range b {
		crc = crc<<8 ^ cksumTable[byte(crc>>24)^c]
	}
	for n := len(b); n > 0; n >>= 8 {
		crc = crc<<8 ^ cksumTable[byte(crc>>24)^byte(n)]
	}
	return ^crc
}

// parentOf is the entry name of the directory holding name ("./a/b" is in
// "./a", "./a" in ".").
func parentOf(name string) string {
	if d := path.Dir(name); d != "." {
		return "./" + d
	}
	return "."
}
