package platform

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// The service's binary against --ctrld, on files made for each case: what
// ctrld wrote (links resolved) and how an admin may reach the same file.
func TestSameBinary(t *testing.T) {
	wine.Skip(t, wine.NoSymlinks)
	dir := t.TempDir()
	realBin := filepath.Join(dir, "var", "usrlocal", "bin")
	if err := os.MkdirAll(realBin, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(realBin, "ctrld")
	other := filepath.Join(realBin, "ctrld-copy")
	for _, p := range []string{bin, other} {
		if err := os.WriteFile(p, []byte("the same bytes"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	hard := filepath.Join(dir, "hard-ctrld")
	if err := os.Link(bin, hard); err != nil {
		t.Fatal(err)
	}
	// /usr/local a symlink to /var/usrlocal (Fedora Silverblue, CoreOS),
	// and a link to the binary itself.
	usrLocal := filepath.Join(dir, "usr", "local")
	link := filepath.Join(dir, "ctrld-link")
	symlinks := true
	if err := os.MkdirAll(filepath.Dir(usrLocal), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Dir(realBin), usrLocal); err != nil {
		symlinks = false // Windows without the privilege to make links
	} else if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(dir, "gone", "ctrld")

	for _, tc := range []struct {
		name            string
		service, given  string
		want, needsLink bool
	}{
		{"the same path", bin, bin, true, false},
		{"the same path spelled with a dot", bin, filepath.Join(realBin, ".", "ctrld"), true, false},
		{"a hard link is the same file", bin, hard, true, false},
		{"a copy with the same bytes is another file", bin, other, false, false},
		{"--ctrld through a symlinked directory", bin, filepath.Join(usrLocal, "bin", "ctrld"), true, true},
		{"--ctrld a symlink to the service's binary", bin, link, true, true},
		{"the service's binary gone, --ctrld there", gone, bin, false, false},
		{"--ctrld gone, the service's binary there", bin, gone, false, false},
		{"both gone, the same path", gone, gone, true, false},
		{"both gone, the same path spelled otherwise", gone, filepath.Join(dir, "gone", ".", "ctrld"), true, false},
		{"both gone, other paths", gone, filepath.Join(dir, "gone", "ctrld2"), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.needsLink && !symlinks {
				t.Skip("no symlinks here")
			}
			if got := SameBinary(tc.service, tc.given); got != tc.want {
				t.Errorf("SameBinary(%s, %s) = %v, want %v", tc.service, tc.given, got, tc.want)
			}
			if got := SameBinary(tc.given, tc.service); got != tc.want {
				t.Errorf("SameBinary(%s, %s) = %v, want %v: the comparison is symmetric", tc.given, tc.service, got, tc.want)
			}
		})
	}
}
