package flatpkg

import (
	"bytes"
	"debug/macho"
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

// The flags of an entry's metadata: the low four bits all set for a Bom
// that records metadata (not only paths), the high four the kind of file.
const (
	bomFlagsFull     = 0x000f
	bomKindThin      = 0x1000 // a Mach-O executable for one architecture
	bomKindUniversal = 0x2000
)

// bomArch is one architecture of a Mach-O file as the Bom records it.
type bomArch struct {
	cpu, subCPU, size, sum uint32
}

// machO returns the architectures of a Mach-O file, thin or universal,
// each with its size and CRC; nil for any other file.
func machO(b []byte) (archs []bomArch, universal bool) {
	if ff, err := macho.NewFatFile(bytes.NewReader(b)); err == nil {
		for _, a := range ff.Arches {
			end := uint64(a.Offset) + uint64(a.Size)
			if end > uint64(len(b)) {
				return nil, false
			}
			archs = append(archs, bomArch{uint32(a.Cpu), a.SubCpu, a.Size, cksum(b[a.Offset:end])})
		}
		return archs, true
	}
	if f, err := macho.NewFile(bytes.NewReader(b)); err == nil {
		return []bomArch{{uint32(f.Cpu), f.SubCpu, uint32(len(b)), cksum(b)}}, false
	}
	return nil, false
}

// bomInfo is the BomInfo variable: how many paths, and the bytes of each
// architecture (0 for everything but executables).
type bomInfo struct {
	paths uint32
	cpus  []uint32
	size  map[uint32]uint32
}

func (b *bomInfo) add(cpu, size uint32) {
	if b.size == nil {
		b.size = map[uint32]uint32{}
	}
	if _, ok := b.size[cpu]; !ok {
		b.cpus = append(b.cpus, cpu)
	}
	b.size[cpu] += size
	b.paths++
}

func (b *bomInfo) bytes() []byte {
	be := binary.BigEndian
	var out []byte
	out = be.AppendUint32(out, 1) // version
	out = be.AppendUint32(out, b.paths)
	out = be.AppendUint32(out, uint32(len(b.cpus)))
	for _, c := range b.cpus {
		out = be.AppendUint32(out, c)
		out = be.AppendUint32(out, 0)
		out = be.AppendUint32(out, b.size[c])
		out = be.AppendUint32(out, 0)
	}
	return out
}

// metadata is an entry's metadata block: type, flags, mode, owner, time,
// size, and for a file its CRC (and each architecture of an executable),
// ending with eight zero bytes as Apple's mkbom writes it.
func metadata(e entry, mtime int64, info *bomInfo) []byte {
	be := binary.BigEndian
	typ, flags := byte(bomTypeFile), uint16(bomFlagsFull)
	var archs []bomArch
	if e.dir {
		typ = bomTypeDir
	} else if a, universal := machO(e.data); a != nil {
		archs = a
		flags |= bomKindThin
		if universal {
			flags = bomFlagsFull | bomKindUniversal
		}
	}
	var b []byte
	b = append(b, typ, 1)
	b = be.AppendUint16(b, flags)
	b = be.AppendUint16(b, uint16(e.fullMode()))
	b = be.AppendUint32(b, 0) // uid root
	b = be.AppendUint32(b, 0) // gid wheel
	b = be.AppendUint32(b, uint32(mtime))
	b = be.AppendUint32(b, uint32(len(e.data)))
	b = append(b, 1)
	if !e.dir {
		b = be.AppendUint32(b, cksum(e.data))
	}
	if archs != nil {
		b = append(b, 1)
		b = be.AppendUint32(b, uint32(len(archs)))
		for _, a := range archs {
			b = be.AppendUint32(b, a.cpu)
			b = be.AppendUint32(b, a.subCPU)
			b = be.AppendUint32(b, a.size)
			b = be.AppendUint32(b, a.sum)
			info.add(a.cpu, a.size)
		}
	} else {
		info.add(0, uint32(len(e.data)))
	}
	return append(b, make([]byte, 8)...)
}

// leafCapacity is how many paths one leaf of the Paths tree holds.
const leafCapacity = 256

// bom returns the Bom of entries (as tree returns them, "." first).
func bom(entries []entry, mtime int64) []byte {
	be := binary.BigEndian
	s := &bomStore{}

	// Ids in breadth-first order, children by name: the tree's keys
	// (parent id, name) are then in order.
	ordered := breadthFirst(entries)
	metas := make([][]byte, len(ordered))
	info := bomInfo{}
	for i, e := range ordered {
		metas[i] = metadata(e, mtime, &info)
	}
	s.addVar("BomInfo", info.bytes())

	ids := map[string]uint32{}
	for i, e := range ordered {
		ids[e.name] = uint32(i + 1)
	}
	type index struct{ info1, file uint32 }
	var leaves [][]index
	for i, e := range ordered {
		var p1 []byte
		p1 = be.AppendUint32(p1, uint32(i+1))
		p1 = be.AppendUint32(p1, s.add(metas[i]))
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
