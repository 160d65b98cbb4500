//go:build unix

package fleet

import (
	"testing"

	"golang.org/x/sys/unix"
)

func mkfifo(t *testing.T, path string) {
	if err := unix.Mkfifo(path, 0o644); err != nil {
		t.Fatalf("Mkfifo(%q): %v", path, err)
	}
}
