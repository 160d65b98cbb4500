package flatpkg

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var when = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func sample() Product {
	return Product{
		Title: "ctrld", Identifier: "com.controld.ctrld", Version: "1.2.3", MinMacOS: "12.0",
		HostArchitectures: "x86_64,arm64", ModTime: when,
		Payload: []File{
			{Path: "usr/local/bin/ctrld-install", Mode: 0o755, Data: []byte("installer\x00binary")},
			{Path: "usr/local/bin/ctrld", Mode: 0o755, Data: bytes.Repeat([]byte("ctrld"), 3000)},
		},
		Scripts: []File{
			{Path: "postinstall", Mode: 0o755, Data: []byte("#!/bin/sh\nexit 0\n")},
			{Path: "provision_token", Mode: 0o600, Data: []byte("TOKEN\n")},
		},
	}
}

func build(t *testing.T, p Product) []byte {
	t.Helper()
	b, err := p.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Two builds of the same input are the same bytes, whatever order the
// files are given in.
func TestReproducible(t *testing.T) {
	a := build(t, sample())
	p := sample()
	slices.Reverse(p.Payload)
	slices.Reverse(p.Scripts)
	if b := build(t, p); !bytes.Equal(a, b) {
		t.Fatal("two builds of the same files differ")
	}
	p.ModTime = when.Add(time.Second)
	if b := build(t, p); bytes.Equal(a, b) {
		t.Fatal("a build with another time is the same: the time is not used")
	}
}

// parsedXar is what readXar finds: each file's path and extracted bytes.
type parsedXar struct {
	files map[string][]byte
	toc   string
}

type tocFile struct {
	Name string `xml:"name"`
	Type string `xml:"type"`
	Mode string `xml:"mode"`
	UID  int    `xml:"uid"`
	GID  int    `xml:"gid"`
	User string `xml:"user"`
	Data *struct {
		Length    int    `xml:"length"`
		Offset    int    `xml:"offset"`
		Size      int    `xml:"size"`
		Archived  string `xml:"archived-checksum"`
		Extracted string `xml:"extracted-checksum"`
	} `xml:"data"`
	Files []tocFile `xml:"file"`
}

// readXar reads an archive the way xar does, checking every checksum.
func readXar(t *testing.T, b []byte) parsedXar {
	t.Helper()
	be := binary.BigEndian
	if be.Uint32(b) != xarMagic || be.Uint16(b[4:]) != 28 || be.Uint16(b[6:]) != 1 || be.Uint32(b[24:]) != 1 {
		t.Fatalf("bad xar header % x", b[:28])
	}
	clen, ulen := be.Uint64(b[8:]), be.Uint64(b[16:])
	z := b[28 : 28+clen]
	zr, err := zlib.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(zr)
	if err != nil || uint64(len(plain)) != ulen {
		t.Fatalf("TOC: %v, %d bytes, header says %d", err, len(plain), ulen)
	}
	heap := b[28+clen:]
	var toc struct {
		TOC struct {
			Checksum struct {
				Style  string `xml:"style,attr"`
				Offset int    `xml:"offset"`
				Size   int    `xml:"size"`
			} `xml:"checksum"`
			Files []tocFile `xml:"file"`
		} `xml:"toc"`
	}
	if err := xml.Unmarshal(plain, &toc); err != nil {
		t.Fatal(err)
	}
	c := toc.TOC.Checksum
	sum := sha1.Sum(z)
	if c.Style != "sha1" || !bytes.Equal(heap[c.Offset:c.Offset+c.Size], sum[:]) {
		t.Fatal("the TOC's checksum does not verify")
	}
	out := parsedXar{files: map[string][]byte{}, toc: string(plain)}
	var walk func(prefix string, fs []tocFile)
	walk = func(prefix string, fs []tocFile) {
		for _, f := range fs {
			name := prefix + f.Name
			if f.UID != 0 || f.GID != 0 || f.User != "root" {
				t.Errorf("%s: owner %d:%d %s, want root 0:0", name, f.UID, f.GID, f.User)
			}
			if f.Type == "directory" {
				walk(name+"/", f.Files)
				continue
			}
			d := f.Data
			data := heap[d.Offset : d.Offset+d.Length]
			if got := sha1hex(data); got != d.Archived || got != d.Extracted || d.Size != d.Length {
				t.Errorf("%s: checksum %s, TOC says %s and %s", name, got, d.Archived, d.Extracted)
			}
			out.files[name] = data
		}
	}
	walk("", toc.TOC.Files)
	return out
}

type cpioEntry struct {
	name     string
	mode     uint32
	uid, gid int
	mtime    int64
	data     []byte
}

func readCpio(t *testing.T, gz []byte) []cpioEntry {
	t.Helper()
	b, err := gunzip(gz)
	if err != nil {
		t.Fatal(err)
	}
	var out []cpioEntry
	oct := func(s string) int64 {
		n, err := strconv.ParseInt(s, 8, 64)
		if err != nil {
			t.Fatalf("bad octal %q", s)
		}
		return n
	}
	for {
		if len(b) < 76 || string(b[:6]) != "070707" {
			t.Fatalf("bad cpio header %q", b[:min(len(b), 76)])
		}
		h := string(b[:76])
		namesize, filesize := oct(h[59:65]), oct(h[65:76])
		name := string(b[76 : 76+namesize-1])
		data := b[76+namesize : 76+namesize+filesize]
		b = b[76+namesize+filesize:]
		if name == "TRAILER!!!" {
			break
		}
		out = append(out, cpioEntry{name: name, mode: uint32(oct(h[18:24])), uid: int(oct(h[24:30])),
			gid: int(oct(h[30:36])), mtime: oct(h[48:59]), data: data})
	}
	return out
}

// The archive, read back as xar reads it: every checksum verifies, the
// component holds Bom, Payload, Scripts and PackageInfo, the payload
// and the scripts hold the files with their modes, root:wheel, one time.
func TestReadBack(t *testing.T) {
	x := readXar(t, build(t, sample()))
	var names []string
	for n := range x.files {
		names = append(names, n)
	}
	slices.Sort(names)
	want := []string{"Distribution", "com.controld.ctrld.pkg/Bom", "com.controld.ctrld.pkg/PackageInfo",
		"com.controld.ctrld.pkg/Payload", "com.controld.ctrld.pkg/Scripts"}
	if !slices.Equal(names, want) {
		t.Fatalf("archive holds %q, want %q", names, want)
	}
	payload := readCpio(t, x.files["com.controld.ctrld.pkg/Payload"])
	var got []string
	for _, e := range payload {
		got = append(got, e.name+" "+strconv.FormatUint(uint64(e.mode), 8))
		if e.uid != 0 || e.gid != 0 || e.mtime != when.Unix() {
			t.Errorf("%s: %d:%d at %d, want 0:0 at %d", e.name, e.uid, e.gid, e.mtime, when.Unix())
		}
	}
	wantPayload := []string{". 40755", "./usr 40755", "./usr/local 40755", "./usr/local/bin 40755",
		"./usr/local/bin/ctrld 100755", "./usr/local/bin/ctrld-install 100755"}
	if !slices.Equal(got, wantPayload) {
		t.Errorf("payload holds %q, want %q", got, wantPayload)
	}
	if !bytes.Equal(payload[5].data, []byte("installer\x00binary")) {
		t.Errorf("ctrld-install's bytes differ")
	}
	scripts := readCpio(t, x.files["com.controld.ctrld.pkg/Scripts"])
	got = nil
	for _, e := range scripts {
		got = append(got, e.name+" "+strconv.FormatUint(uint64(e.mode), 8))
	}
	if want := []string{". 40755", "./postinstall 100755", "./provision_token 100600"}; !slices.Equal(got, want) {
		t.Errorf("scripts hold %q, want %q", got, want)
	}
	for _, s := range []string{`hostArchitectures="x86_64,arm64"`, `<os-version min="12.0">`,
		`version="1.2.3"`, `>#com.controld.ctrld.pkg</pkg-ref>`} {
		if !strings.Contains(string(x.files["Distribution"]), s) {
			t.Errorf("Distribution lacks %s:\n%s", s, x.files["Distribution"])
		}
	}
	for _, s := range []string{`identifier="com.controld.ctrld"`, `<payload numberOfFiles="6" installKBytes="16">`,
		`<postinstall file="./postinstall">`, `install-location="/"`} {
		if !strings.Contains(string(x.files["com.controld.ctrld.pkg/PackageInfo"]), s) {
			t.Errorf("PackageInfo lacks %s:\n%s", s, x.files["com.controld.ctrld.pkg/PackageInfo"])
		}
	}
	paths := readBom(t, x.files["com.controld.ctrld.pkg/Bom"])
	wantBom := []string{". 40755 0/0 0", "./usr 40755 0/0 0", "./usr/local 40755 0/0 0", "./usr/local/bin 40755 0/0 0",
		"./usr/local/bin/ctrld 100755 0/0 15000 " + strconv.FormatUint(uint64(cksum(bytes.Repeat([]byte("ctrld"), 3000))), 10),
		"./usr/local/bin/ctrld-install 100755 0/0 16 " + strconv.FormatUint(uint64(cksum([]byte("installer\x00binary"))), 10)}
	if !slices.Equal(paths, wantBom) {
		t.Errorf("the Bom lists\n%s\nwant\n%s", strings.Join(paths, "\n"), strings.Join(wantBom, "\n"))
	}
}

// readBom lists a Bom's paths the way lsbom does: path, mode, uid/gid,
// and for files size and checksum, in the tree's order.
func readBom(t *testing.T, b []byte) []string {
	t.Helper()
	be := binary.BigEndian
	if string(b[:8]) != "BOMStore" || be.Uint32(b[8:]) != 1 {
		t.Fatal("not a BOMStore")
	}
	indexOff, varsOff := be.Uint32(b[16:]), be.Uint32(b[24:])
	nblocks := be.Uint32(b[indexOff:])
	if int(be.Uint32(b[12:])) != int(nblocks)-1 {
		t.Errorf("header counts %d blocks, the table %d and the null block", be.Uint32(b[12:]), nblocks)
	}
	block := func(i uint32) []byte {
		if i == 0 || i >= nblocks {
			t.Fatalf("block %d out of range", i)
		}
		p := indexOff + 4 + 8*i
		off, n := be.Uint32(b[p:]), be.Uint32(b[p+4:])
		return b[off : off+n]
	}
	vars := map[string]uint32{}
	p := varsOff + 4
	for range be.Uint32(b[varsOff:]) {
		idx, n := be.Uint32(b[p:]), uint32(b[p+4])
		vars[string(b[p+5:p+5+n])] = idx
		p += 5 + n
	}
	for _, v := range []string{"BomInfo", "Paths", "HLIndex", "VIndex", "Size64"} {
		if _, ok := vars[v]; !ok {
			t.Errorf("no variable %s", v)
		}
	}
	tree := block(vars["Paths"])
	if string(tree[:4]) != "tree" {
		t.Fatal("Paths is not a tree")
	}
	count := be.Uint32(tree[16:])
	paths := block(be.Uint32(tree[8:]))
	if be.Uint16(paths) != 1 {
		t.Fatal("expected a single leaf")
	}
	names := map[uint32]string{}
	var out []string
	for i := range uint32(be.Uint16(paths[2:])) {
		e := paths[12+8*i:]
		info1, file := block(be.Uint32(e)), block(be.Uint32(e[4:]))
		id, info2 := be.Uint32(info1), block(be.Uint32(info1[4:]))
		parent := be.Uint32(file)
		name := string(file[4 : len(file)-1])
		if parent != 0 {
			name = names[parent] + "/" + name
		}
		names[id] = name
		mode := be.Uint16(info2[4:])
		line := name + " " + strconv.FormatUint(uint64(mode), 8) + " " +
			strconv.Itoa(int(be.Uint32(info2[6:]))) + "/" + strconv.Itoa(int(be.Uint32(info2[10:]))) + " " +
			strconv.Itoa(int(be.Uint32(info2[18:])))
		if info2[0] == bomTypeFile {
			line += " " + strconv.FormatUint(uint64(be.Uint32(info2[23:])), 10)
		}
		if be.Uint32(info2[14:]) != uint32(when.Unix()) {
			t.Errorf("%s: time %d", name, be.Uint32(info2[14:]))
		}
		out = append(out, line)
	}
	if int(count) != len(out) {
		t.Errorf("the tree counts %d paths, its leaf holds %d", count, len(out))
	}
	return out
}

// A payload-free package has neither Bom nor Payload, as pkgbuild
// --nopayload writes it.
func TestPayloadFree(t *testing.T) {
	p := sample()
	p.Payload = nil
	p.Scripts = p.Scripts[:1]
	x := readXar(t, build(t, p))
	var names []string
	for n := range x.files {
		names = append(names, n)
	}
	slices.Sort(names)
	if want := []string{"Distribution", "com.controld.ctrld.pkg/PackageInfo", "com.controld.ctrld.pkg/Scripts"}; !slices.Equal(names, want) {
		t.Errorf("archive holds %q, want %q", names, want)
	}
	if strings.Contains(string(x.files["com.controld.ctrld.pkg/PackageInfo"]), "<payload") {
		t.Error("a payload-free PackageInfo names a payload")
	}
}

// Hundreds of paths split the Bom's tree into linked leaves under a
// branch, as Installer's reader expects beyond 256.
func TestManyPaths(t *testing.T) {
	p := sample()
	for i := range 600 {
		p.Payload = append(p.Payload, File{Path: "opt/x/f" + strconv.Itoa(i), Mode: 0o644, Data: []byte{byte(i)}})
	}
	b := readXar(t, build(t, p)).files["com.controld.ctrld.pkg/Bom"]
	be := binary.BigEndian
	indexOff := be.Uint32(b[16:])
	block := func(i uint32) []byte {
		q := indexOff + 4 + 8*i
		return b[be.Uint32(b[q:]) : be.Uint32(b[q:])+be.Uint32(b[q+4:])]
	}
	var paths uint32
	vp := be.Uint32(b[24:]) + 4
	for range be.Uint32(b[be.Uint32(b[24:]):]) {
		n := uint32(b[vp+4])
		if string(b[vp+5:vp+5+n]) == "Paths" {
			paths = be.Uint32(b[vp:])
		}
		vp += 5 + n
	}
	root := block(be.Uint32(block(paths)[8:]))
	if be.Uint16(root) != 0 || be.Uint16(root[2:]) != 3 {
		t.Fatalf("root is leaf=%d with %d entries, want a branch over 3 leaves", be.Uint16(root), be.Uint16(root[2:]))
	}
	total := 0
	for i := range uint32(3) {
		leaf := block(be.Uint32(root[12+8*i:]))
		total += int(be.Uint16(leaf[2:]))
	}
	if total != 608 {
		t.Errorf("the leaves hold %d paths, want 608", total)
	}
}

func TestRefusesBadInput(t *testing.T) {
	for name, change := range map[string]func(*Product){
		"absolute path": func(p *Product) { p.Payload[0].Path = "/usr/bin/x" },
		"dot-dot":       func(p *Product) { p.Payload[0].Path = "../x" },
		"twice":         func(p *Product) { p.Payload[1].Path = p.Payload[0].Path },
		"file and dir":  func(p *Product) { p.Payload[1].Path = "usr/local/bin/ctrld-install/x" },
		"version":       func(p *Product) { p.Version = "1.0 <x>" },
		"identifier":    func(p *Product) { p.Identifier = "com/x" },
		"min macOS":     func(p *Product) { p.MinMacOS = "twelve" },
		"nested script": func(p *Product) { p.Scripts[0].Path = "a/postinstall" },
	} {
		p := sample()
		change(&p)
		if _, err := p.Bytes(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// cksum is POSIX cksum's CRC, as the system's cksum prints it.
func TestCksum(t *testing.T) {
	if _, err := exec.LookPath("cksum"); err != nil {
		t.Skip("no cksum here")
	}
	for _, in := range [][]byte{nil, []byte("a"), bytes.Repeat([]byte("0123456789"), 1000)} {
		f := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(f, in, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("cksum", f).Output()
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.Fields(string(out))[0]; strconv.FormatUint(uint64(cksum(in)), 10) != want {
			t.Errorf("cksum of %d bytes: %d, cksum says %s", len(in), cksum(in), want)
		}
	}
}

// bsdtar, an independent reader of xar and cpio, lists the archive and
// extracts the payload with its modes and owners.
func TestBsdtarReads(t *testing.T) {
	if _, err := exec.LookPath("bsdtar"); err != nil {
		t.Skip("no bsdtar here (Debian: libarchive-tools)")
	}
	dir := t.TempDir()
	pkg := filepath.Join(dir, "x.pkg")
	if err := os.WriteFile(pkg, build(t, sample()), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bsdtar", "-tf", pkg).CombinedOutput()
	if err != nil {
		t.Fatalf("bsdtar -tf: %v\n%s", err, out)
	}
	want := "Distribution\ncom.controld.ctrld.pkg\ncom.controld.ctrld.pkg/Bom\ncom.controld.ctrld.pkg/Payload\ncom.controld.ctrld.pkg/Scripts\ncom.controld.ctrld.pkg/PackageInfo\n"
	if string(out) != want {
		t.Errorf("bsdtar -tf lists\n%s\nwant\n%s", out, want)
	}
	x := filepath.Join(dir, "x")
	if err := os.Mkdir(x, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("bsdtar", "-xf", pkg, "-C", x).CombinedOutput(); err != nil {
		t.Fatalf("bsdtar -xf: %v\n%s", err, out)
	}
	out, err = exec.Command("bsdtar", "-tvf", filepath.Join(x, "com.controld.ctrld.pkg", "Payload"), "--numeric-owner").CombinedOutput()
	if err != nil {
		t.Fatalf("bsdtar -tvf Payload: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 6 {
		t.Fatalf("Payload lists\n%s", out)
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if f[2] != "0" || f[3] != "0" {
			t.Errorf("owner in %q, want 0 0", l)
		}
		if strings.HasSuffix(l, "/ctrld") || strings.HasSuffix(l, "/ctrld-install") {
			if f[0] != "-rwxr-xr-x" {
				t.Errorf("mode in %q, want -rwxr-xr-x", l)
			}
		}
	}
}

// thinMachO is the smallest Mach-O file debug/macho reads: a 64-bit
// little-endian header with no load commands, padded.
func thinMachO(cpu, sub uint32, pad int) []byte {
	le := binary.LittleEndian
	var b []byte
	b = le.AppendUint32(b, 0xfeedfacf)
	b = le.AppendUint32(b, cpu)
	b = le.AppendUint32(b, sub)
	b = le.AppendUint32(b, 2) // MH_EXECUTE
	b = append(b, make([]byte, 16)...)
	return append(b, bytes.Repeat([]byte{byte(cpu)}, pad)...)
}

// universal joins thin files as lipo does, each at a 4 KiB boundary.
func universal(thin ...[]byte) []byte {
	be := binary.BigEndian
	var b []byte
	b = be.AppendUint32(b, 0xcafebabe)
	b = be.AppendUint32(b, uint32(len(thin)))
	off := uint32(4096)
	for _, t := range thin {
		cpu, sub := binary.LittleEndian.Uint32(t[4:]), binary.LittleEndian.Uint32(t[8:])
		b = be.AppendUint32(b, cpu)
		b = be.AppendUint32(b, sub)
		b = be.AppendUint32(b, off)
		b = be.AppendUint32(b, uint32(len(t)))
		b = be.AppendUint32(b, 12)
		off += (uint32(len(t)) + 4095) &^ 4095
	}
	for _, t := range thin {
		b = append(b, make([]byte, (4096-len(b)%4096)%4096)...)
		b = append(b, t...)
	}
	return b
}

// Executables are recorded with each architecture, its size and CRC, and
// BomInfo sums the bytes of each architecture, as Apple's mkbom does.
func TestBomRecordsArchitectures(t *testing.T) {
	const x86, arm = 0x01000007, 0x0100000c
	amd, a64 := thinMachO(x86, 3, 100), thinMachO(arm, 0, 200)
	fat := universal(amd, a64)
	p := sample()
	p.Payload = []File{{Path: "bin/u", Mode: 0o755, Data: fat}, {Path: "bin/t", Mode: 0o755, Data: a64}, {Path: "bin/x", Mode: 0o644, Data: []byte("text")}}
	b := readXar(t, build(t, p)).files["com.controld.ctrld.pkg/Bom"]
	be := binary.BigEndian
	indexOff := be.Uint32(b[16:])
	block := func(i uint32) []byte {
		q := indexOff + 4 + 8*i
		return b[be.Uint32(b[q:]) : be.Uint32(b[q:])+be.Uint32(b[q+4:])]
	}
	vars := map[string]uint32{}
	vp := be.Uint32(b[24:]) + 4
	for range be.Uint32(b[be.Uint32(b[24:]):]) {
		n := uint32(b[vp+4])
		vars[string(b[vp+5:vp+5+n])] = be.Uint32(b[vp:])
		vp += 5 + n
	}
	leaf := block(be.Uint32(block(vars["Paths"])[8:]))
	meta := map[string][]byte{}
	for i := range uint32(be.Uint16(leaf[2:])) {
		e := leaf[12+8*i:]
		f := block(be.Uint32(e[4:]))
		meta[string(f[4:len(f)-1])] = block(be.Uint32(block(be.Uint32(e))[4:]))
	}
	check := func(name string, flags uint16, archs [][3]uint32) {
		t.Helper()
		m := meta[name]
		if got := be.Uint16(m[2:]); got != flags {
			t.Errorf("%s: flags %#x, want %#x", name, got, flags)
		}
		rest := m[27:]
		if archs != nil {
			if rest[0] != 1 || be.Uint32(rest[1:]) != uint32(len(archs)) {
				t.Fatalf("%s: % x", name, rest)
			}
			rest = rest[5:]
			for _, a := range archs {
				if be.Uint32(rest) != a[0] || be.Uint32(rest[8:]) != a[1] || be.Uint32(rest[12:]) != a[2] {
					t.Errorf("%s: arch % x, want cpu %#x size %d crc %d", name, rest[:16], a[0], a[1], a[2])
				}
				rest = rest[16:]
			}
		}
		if !bytes.Equal(rest, make([]byte, 8)) {
			t.Errorf("%s: ends with % x, want eight zero bytes", name, rest)
		}
	}
	check("u", 0x200f, [][3]uint32{{x86, uint32(len(amd)), cksum(amd)}, {arm, uint32(len(a64)), cksum(a64)}})
	check("t", 0x100f, [][3]uint32{{arm, uint32(len(a64)), cksum(a64)}})
	check("x", 0x000f, nil)
	if d := meta["bin"]; be.Uint16(d[2:]) != 0x000f || !bytes.Equal(d[23:], make([]byte, 8)) {
		t.Errorf("the directory's metadata is % x", d)
	}

	info := block(vars["BomInfo"])
	// ".", "bin", "x" at CPU 0; u twice, t once.
	if paths, n := be.Uint32(info[4:]), be.Uint32(info[8:]); paths != 6 || n != 3 {
		t.Fatalf("BomInfo counts %d paths in %d entries, want 6 in 3", paths, n)
	}
	got := map[uint32]uint32{}
	for i := range uint32(3) {
		e := info[12+16*i:]
		got[be.Uint32(e)] = be.Uint32(e[8:])
	}
	want := map[uint32]uint32{0: 4, x86: uint32(len(amd)), arm: uint32(2 * len(a64))}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("BomInfo gives CPU %#x %d bytes, want %d", k, got[k], v)
		}
	}
}
