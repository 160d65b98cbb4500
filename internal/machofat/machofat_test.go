package machofat

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// thinFile is the smallest Mach-O file debug/macho accepts: a 64-bit
// little-endian header without load commands, then payload bytes.
func thinFile(cpu macho.Cpu, sub uint32, payload int) []byte {
	b := make([]byte, 32+payload)
	binary.LittleEndian.PutUint32(b[0:], macho.Magic64)
	binary.LittleEndian.PutUint32(b[4:], uint32(cpu))
	binary.LittleEndian.PutUint32(b[8:], sub)
	binary.LittleEndian.PutUint32(b[12:], uint32(macho.TypeExec))
	for i := 32; i < len(b); i++ {
		b[i] = byte(i * int(cpu))
	}
	return b
}

func fat(t *testing.T, thin ...[]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, thin...); err != nil {
		t.Fatalf("Write of %d slices: %v", len(thin), err)
	}
	return buf.Bytes()
}

// checkFat parses b back and checks that every slice is one of thin,
// unchanged, at an aligned offset, in CPU type order.
func checkFat(t *testing.T, b []byte, thin ...[]byte) {
	t.Helper()
	ff, err := macho.NewFatFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("macho.NewFatFile: %v", err)
	}
	defer ff.Close()
	if got, want := len(ff.Arches), len(thin); got != want {
		t.Fatalf("universal file has %d slices, want %d", got, want)
	}
	byCPU := map[macho.Cpu][]byte{}
	for _, th := range thin {
		f, err := macho.NewFile(bytes.NewReader(th))
		if err != nil {
			t.Fatalf("macho.NewFile: %v", err)
		}
		byCPU[f.Cpu] = th
	}
	end := uint64(0)
	for i, a := range ff.Arches {
		if i > 0 && a.Cpu <= ff.Arches[i-1].Cpu {
			t.Errorf("slice %d has CPU %v after %v: slices are in CPU type order", i, a.Cpu, ff.Arches[i-1].Cpu)
		}
		if got, want := a.Align, uint32(AlignLog2); got != want {
			t.Errorf("slice %d: Align = %d, want %d", i, got, want)
		}
		if a.Offset%(1<<AlignLog2) != 0 {
			t.Errorf("slice %d: Offset = %d, want a multiple of %d", i, a.Offset, 1<<AlignLog2)
		}
		input, ok := byCPU[a.Cpu]
		if !ok {
			t.Fatalf("slice %d has CPU %v, the CPU type of no input", i, a.Cpu)
		}
		if got, want := a.Size, uint32(len(input)); got != want {
			t.Errorf("slice %d: Size = %d, want %d", i, got, want)
		}
		if !bytes.Equal(b[a.Offset:a.Offset+a.Size], input) {
			t.Errorf("slice %d (%v) differs from its input: it must be the input unchanged", i, a.Cpu)
		}
		end = uint64(a.Offset + a.Size)
	}
	if got, want := end, uint64(len(b)); got != want {
		t.Errorf("last slice ends at %d, file is %d bytes: nothing follows the last slice", got, want)
	}
	if got, want := ff.Arches[0].Offset, uint32(1<<AlignLog2); got != want {
		t.Errorf("first slice at offset %d, want %d: the first aligned offset after the header", got, want)
	}
}

func TestWriteTwoSlices(t *testing.T) {
	amd := thinFile(macho.CpuAmd64, 3, 40000)
	arm := thinFile(macho.CpuArm64, 0, 12345)
	b := fat(t, arm, amd)
	checkFat(t, b, amd, arm)
	if got, want := b[:8], []byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2}; !bytes.Equal(got, want) {
		t.Errorf("header starts % x, want % x", got, want)
	}
}

// The release must not depend on the order the script names the inputs.
func TestWriteIgnoresInputOrder(t *testing.T) {
	amd := thinFile(macho.CpuAmd64, 3, 100)
	arm := thinFile(macho.CpuArm64, 0, 200)
	if !bytes.Equal(fat(t, amd, arm), fat(t, arm, amd)) {
		t.Errorf("Write(amd64, arm64) and Write(arm64, amd64) differ")
	}
}

func TestWriteOneSlice(t *testing.T) {
	arm := thinFile(macho.CpuArm64, 0, 1)
	checkFat(t, fat(t, arm), arm)
}

func TestWriteRefuses(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf); err == nil {
		t.Errorf("Write with no input succeeded, want an error")
	}
	if err, want := Write(&buf, []byte("#!/bin/sh\necho not mach-o\n")), "not a thin Mach-O file"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Write(shell script) = %v, want an error containing %q", err, want)
	}
	amd := thinFile(macho.CpuAmd64, 3, 10)
	if err, want := Write(&buf, amd, thinFile(macho.CpuAmd64, 8, 20)), "same CPU type"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Write(amd64, amd64) = %v, want an error containing %q", err, want)
	}
	// A universal file is not a thin one.
	if err := Write(&buf, fat(t, amd)); err == nil {
		t.Errorf("Write(universal file) succeeded, want an error")
	}
}

// Real Go executables, as the release joins them.
func TestWriteGoExecutables(t *testing.T) {
	// Two builds and links cost seconds of the everyday run; the
	// synthetic tests above cover the format, and CI runs this one with
	// the release.
	if os.Getenv("CTRLD_INSTALL_RELEASE_FULL") != "1" {
		t.Skip("builds two executables; set CTRLD_INSTALL_RELEASE_FULL=1")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var thin [][]byte
	for _, arch := range []string{"amd64", "arm64"} {
		out := filepath.Join(dir, "hello-"+arch)
		cmd := exec.Command(goBin, "build", "-trimpath", "-o", out, ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH="+arch, "CGO_ENABLED=0", "GOFLAGS=")
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go build for darwin/%s: %v\n%s", arch, err, b)
		}
		th, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		thin = append(thin, th)
	}
	b := fat(t, thin...)
	checkFat(t, b, thin...)
	ff, err := macho.NewFatFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("macho.NewFatFile: %v", err)
	}
	defer ff.Close()
	if got, want := ff.Arches[0].Cpu, macho.CpuAmd64; got != want {
		t.Errorf("first slice CPU = %v, want %v", got, want)
	}
	if got, want := ff.Arches[1].Cpu, macho.CpuArm64; got != want {
		t.Errorf("second slice CPU = %v, want %v", got, want)
	}
	for _, a := range ff.Arches {
		if a.Segment("__TEXT") == nil {
			t.Errorf("%v slice has no __TEXT segment: each slice is a whole executable", a.Cpu)
		}
	}
}
