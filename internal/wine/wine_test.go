package wine

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// EnvUnderWine is set by CI's Wine run, so that a detection that stopped
// working fails here instead of turning every skip off unnoticed.
const EnvUnderWine = "CTRLD_INSTALL_UNDER_WINE"

func TestDetected(t *testing.T) {
	switch {
	case os.Getenv(EnvUnderWine) == "1" && !Detected():
		t.Fatalf("%s=1 but Wine was not detected", EnvUnderWine)
	case runtime.GOOS != "windows" && Detected():
		t.Fatalf("Wine detected on %s", runtime.GOOS)
	}
}

func TestRemoveTree(t *testing.T) {
	dir := TempDir(t)
	top := filepath.Join(dir, "top")
	for _, p := range []string{"a/b/c", "a/d", "e"} {
		if err := os.MkdirAll(filepath.Join(top, filepath.FromSlash(p)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"f", "a/g", "a/b/c/h", "e/i"} {
		if err := os.WriteFile(filepath.Join(top, filepath.FromSlash(p)), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Read-only, as a test might leave a file.
	if err := os.Chmod(filepath.Join(top, "a", "g"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := RemoveTree(top); err != nil {
		t.Fatalf("RemoveTree: %v", err)
	}
	if _, err := os.Lstat(top); !os.IsNotExist(err) {
		t.Fatalf("after RemoveTree, Lstat = %v, want not found", err)
	}
	if err := RemoveTree(top); err != nil {
		t.Errorf("RemoveTree of a missing directory = %v, want nil", err)
	}
}

// The files left in a TempDir are what Wine cannot remove with RemoveAll;
// the testing package's own cleanup must find nothing to fail on.
func TestTempDirCleansUpUnderWine(t *testing.T) {
	dir := TempDir(t)
	if err := os.MkdirAll(filepath.Join(dir, "x", "y"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x", "y", "z"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}
