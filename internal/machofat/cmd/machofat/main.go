// Command machofat writes a universal macOS executable from thin ones, for
// scripts/release.sh on machines without lipo:
//
//	go run ./internal/machofat/cmd/machofat -o OUT THIN...
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/Control-D-Inc/ctrld-install/internal/machofat"
)

func main() {
	out := flag.String("o", "", "the universal file to write")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: machofat -o OUT THIN...")
		os.Exit(2)
	}
	if err := run(*out, flag.Args()); err != nil {
		fmt.Fprintf(os.Stderr, "machofat: error: %s\n", err)
		os.Exit(1)
	}
}

func run(out string, inputs []string) error {
	var thin [][]byte
	for _, p := range inputs {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		thin = append(thin, b)
	}
	var buf bytes.Buffer
	if err := machofat.Write(&buf, thin...); err != nil {
		return err
	}
	// A temporary file and a rename: a failed run leaves no half-written
	// executable under the final name.
	tmp, err := os.CreateTemp(filepath.Dir(out), ".machofat-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}
