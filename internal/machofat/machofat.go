// Package machofat joins thin Mach-O executables into one universal ("fat")
// file, as `lipo -create` does, so that the macOS release can be built on
// any machine. The format is a big-endian fat_header (magic, number of
// slices), one fat_arch per slice (CPU type, CPU subtype, offset, size,
// alignment as a power of two), then each thin file, unchanged, at an
// aligned offset.
package machofat

import (
	"bytes"
	"debug/macho"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// AlignLog2 is every slice's alignment: 2^14, the arm64 page size, which is
// also a multiple of the x86-64 one, so one value suits both.
const AlignLog2 = 14

const (
	fatMagic      = 0xcafebabe // macho.MagicFat
	fatHeaderSize = 8
	fatArchSize   = 20
)

// Write writes the universal file made of the thin Mach-O files in thin. The
// slices are ordered by CPU type, so the output does not depend on the
// order of the arguments. Two slices for the same CPU type are an error.
func Write(w io.Writer, thin ...[]byte) error {
	if len(thin) == 0 {
		return errors.New("no thin Mach-O files given")
	}
	type slice struct {
		cpu, sub uint32
		data     []byte
	}
	var ss []slice
	for i, b := range thin {
		f, err := macho.NewFile(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("input %d is not a thin Mach-O file: %w", i+1, err)
		}
		ss = append(ss, slice{cpu: uint32(f.Cpu), sub: f.SubCpu, data: b})
	}
	slices.SortFunc(ss, func(a, b slice) int {
		if a.cpu != b.cpu {
			return int(int64(a.cpu) - int64(b.cpu))
		}
		return int(int64(a.sub) - int64(b.sub))
	})
	for i := 1; i < len(ss); i++ {
		if ss[i].cpu == ss[i-1].cpu {
			return fmt.Errorf("two inputs are for the same CPU type %#x", ss[i].cpu)
		}
	}

	const align = 1 << AlignLog2
	header := make([]byte, fatHeaderSize+fatArchSize*len(ss))
	binary.BigEndian.PutUint32(header[0:], fatMagic)
	binary.BigEndian.PutUint32(header[4:], uint32(len(ss)))
	offsets := make([]uint64, len(ss))
	off := uint64(len(header))
	for i, s := range ss {
		off = (off + align - 1) &^ (align - 1)
		offsets[i] = off
		end := off + uint64(len(s.data))
		// fat_arch holds 32-bit offsets and sizes; larger files need the
		// fat_arch_64 variant, which an installer this size never will.
		if end > math.MaxUint32 {
			return errors.New("the universal file would pass 4 GiB")
		}
		a := header[fatHeaderSize+fatArchSize*i:]
		binary.BigEndian.PutUint32(a[0:], s.cpu)
		binary.BigEndian.PutUint32(a[4:], s.sub)
		binary.BigEndian.PutUint32(a[8:], uint32(off))
		binary.BigEndian.PutUint32(a[12:], uint32(len(s.data)))
		binary.BigEndian.PutUint32(a[16:], AlignLog2)
		off = end
	}

	written := uint64(0)
	put := func(b []byte) error {
		n, err := w.Write(b)
		written += uint64(n)
		return err
	}
	if err := put(header); err != nil {
		return err
	}
	for i, s := range ss {
		if err := put(make([]byte, offsets[i]-written)); err != nil {
			return err
		}
		if err := put(s.data); err != nil {
			return err
		}
	}
	return nil
}
