package machofat

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	require.NoError(t, Write(&buf, thin...))
	return buf.Bytes()
}

// checkFat parses b back and checks that every slice is one of thin,
// unchanged, at an aligned offset, in CPU type order.
func checkFat(t *testing.T, b []byte, thin ...[]byte) {
	t.Helper()
	ff, err := macho.NewFatFile(bytes.NewReader(b))
	require.NoError(t, err)
	defer ff.Close()
	require.Len(t, ff.Arches, len(thin))
	byCPU := map[macho.Cpu][]byte{}
	for _, th := range thin {
		f, err := macho.NewFile(bytes.NewReader(th))
		require.NoError(t, err)
		byCPU[f.Cpu] = th
	}
	end := uint64(0)
	for i, a := range ff.Arches {
		if i > 0 {
			assert.Greater(t, a.Cpu, ff.Arches[i-1].Cpu, "slices are in CPU type order")
		}
		assert.Equal(t, uint32(AlignLog2), a.Align)
		assert.Zero(t, a.Offset%(1<<AlignLog2), "slice %d is aligned", i)
		want, ok := byCPU[a.Cpu]
		require.True(t, ok, "slice %d has an input's CPU type", i)
		assert.Equal(t, uint32(len(want)), a.Size)
		assert.Equal(t, want, b[a.Offset:a.Offset+a.Size], "slice %d is its input unchanged", i)
		end = uint64(a.Offset + a.Size)
	}
	assert.Equal(t, uint64(len(b)), end, "nothing follows the last slice")
	assert.Equal(t, uint32(1<<AlignLog2), ff.Arches[0].Offset, "the first slice starts at the first aligned offset after the header")
}

func TestWriteTwoSlices(t *testing.T) {
	amd := thinFile(macho.CpuAmd64, 3, 40000)
	arm := thinFile(macho.CpuArm64, 0, 12345)
	b := fat(t, arm, amd)
	checkFat(t, b, amd, arm)
	assert.Equal(t, []byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 2}, b[:8])
}

// The release must not depend on the order the script names the inputs.
func TestWriteIgnoresInputOrder(t *testing.T) {
	amd := thinFile(macho.CpuAmd64, 3, 100)
	arm := thinFile(macho.CpuArm64, 0, 200)
	assert.Equal(t, fat(t, amd, arm), fat(t, arm, amd))
}

func TestWriteOneSlice(t *testing.T) {
	arm := thinFile(macho.CpuArm64, 0, 1)
	checkFat(t, fat(t, arm), arm)
}

func TestWriteRefuses(t *testing.T) {
	var buf bytes.Buffer
	assert.Error(t, Write(&buf))
	assert.ErrorContains(t, Write(&buf, []byte("#!/bin/sh\necho not mach-o\n")), "not a thin Mach-O file")
	amd := thinFile(macho.CpuAmd64, 3, 10)
	assert.ErrorContains(t, Write(&buf, amd, thinFile(macho.CpuAmd64, 8, 20)), "same CPU type")
	// A universal file is not a thin one.
	assert.Error(t, Write(&buf, fat(t, amd)))
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
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module hello\n\ngo 1.22\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { println(\"hello\") }\n"), 0o644))
	var thin [][]byte
	for _, arch := range []string{"amd64", "arm64"} {
		out := filepath.Join(dir, "hello-"+arch)
		cmd := exec.Command(goBin, "build", "-trimpath", "-o", out, ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH="+arch, "CGO_ENABLED=0", "GOFLAGS=")
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", b)
		th, err := os.ReadFile(out)
		require.NoError(t, err)
		thin = append(thin, th)
	}
	b := fat(t, thin...)
	checkFat(t, b, thin...)
	ff, err := macho.NewFatFile(bytes.NewReader(b))
	require.NoError(t, err)
	defer ff.Close()
	assert.Equal(t, macho.CpuAmd64, ff.Arches[0].Cpu)
	assert.Equal(t, macho.CpuArm64, ff.Arches[1].Cpu)
	for _, a := range ff.Arches {
		assert.NotNil(t, a.Segment("__TEXT"), "each slice is a whole executable")
	}
}
