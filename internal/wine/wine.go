// Package wine is for tests of the Windows build, which CI runs under Wine:
// it tells a test whether it runs there, names each way Wine's Windows
// differs from Windows, and works around the one that breaks t.TempDir.
//
// A test skips for a difference only when it runs under Wine, with the
// difference as the reason, so on Windows the same test runs and a skip
// never hides a Windows failure.
package wine

import (
	"os"
	"path/filepath"
	"testing"
)

// Difference is a way Wine 8.0 behaves unlike Windows, in words a skip
// reason can carry.
type Difference string

// The differences the tests meet.
const (
	// Wine keeps no security descriptor of a file: it makes one up from
	// the Unix owner and mode bits when asked, maps a DACL it is given
	// onto mode bits as best it can, and ignores a new owner.
	NoACLs Difference = "Wine makes a file's DACL and owner up from its Unix mode bits and does not enforce them"
	// mgr.Service.Config asks for the delayed auto-start level too.
	NoServiceConfig2 Difference = "Wine's QueryServiceConfig2 fails for the delayed auto-start, service SID and failure-action levels"
	NotAService      Difference = "svc.IsWindowsService reports false inside a service under Wine"
	NoCtrlBreak      Difference = "Wine cannot send CTRL_BREAK_EVENT to a process group"
	// Wine's CreateSymbolicLink is a stub that reports success.
	NoSymlinks Difference = "Wine's CreateSymbolicLink reports success and creates nothing"
	// Go's RemoveAll deletes through FileDispositionInformationEx, which
	// Wine does not implement; TempDir works around it.
	NoRemoveAll Difference = "os.RemoveAll of a non-empty directory fails with \"Invalid function\" under Wine"
	// Wine refuses a rename over a file another handle holds, whatever
	// that handle shares, as Windows does without POSIX rename semantics.
	NoPOSIXRename Difference = "Wine does not implement POSIX rename semantics: a rename over an open file fails"
	// Go sets SIO_UDP_CONNRESET on every UDP socket on Windows; Wine
	// answers WSAEOPNOTSUPP (10045), so no UDP socket opens.
	NoUDP Difference = "Wine refuses the ioctl Go sets on every UDP socket (WSAEOPNOTSUPP)"
)

// Detected reports whether the test runs under Wine. It is false on every
// other operating system and on Windows itself.
func Detected() bool { return detected }

// Skip skips t when it runs under Wine, for the difference d.
func Skip(t testing.TB, d Difference) {
	t.Helper()
	if detected {
		t.Skipf("under Wine: %s", d)
	}
}

// TempDir is t.TempDir, emptied entry by entry at cleanup under Wine (see
// NoRemoveAll) so that the testing package's own removal finds nothing to
// fail on. Anywhere else it is t.TempDir.
func TempDir(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if detected {
		// Cleanups run last registered first: this one before TempDir's.
		t.Cleanup(func() {
			if err := RemoveTree(dir); err != nil {
				t.Errorf("removing the temporary directory: %v", err)
			}
		})
	}
	return dir
}

// RemoveTree removes dir and everything in it one entry at a time: files
// with os.Remove, directories once they are empty. It does what
// os.RemoveAll does, by the calls Wine implements.
func RemoveTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			err = RemoveTree(p)
		} else {
			err = os.Remove(p)
		}
		if err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	if err := os.Remove(dir); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}
