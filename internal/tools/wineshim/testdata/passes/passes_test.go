// Package passes is wine-tests.sh's fixture of a package whose tests pass
// when they run under Wine, in the package's directory.
package passes

import (
	"os"
	"runtime"
	"testing"
)

func TestRunsAsWindowsInItsDirectory(t *testing.T) {
	if runtime.GOOS != "windows" || os.Getenv("CTRLD_INSTALL_UNDER_WINE") != "1" {
		t.Fatalf("GOOS %s, CTRLD_INSTALL_UNDER_WINE %q: want a Windows binary run by wine-tests.sh", runtime.GOOS, os.Getenv("CTRLD_INSTALL_UNDER_WINE"))
	}
	if b, err := os.ReadFile("marker.txt"); err != nil || string(b) != "passes\n" {
		t.Fatalf("marker.txt: %q, %v; want the package's own, read from its directory", b, err)
	}
}

func TestSkipped(t *testing.T) { t.Skip("a reason wine-tests.sh prints") }
