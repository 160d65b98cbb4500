package store

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// The fingerprint is root's alone on Windows too: an ACL of its own,
// SYSTEM and Administrators, not the home's, which lets Users read.
func TestFingerprintIsAdministratorsOnly(t *testing.T) {
	home := filepath.Join(wine.TempDir(t), "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := RememberToken(home, "TOKENONE1234"); err != nil {
		t.Fatalf("RememberToken: %v", err)
	}
	if got := TokenSame(home, "TOKENONE1234"); got != parse.SameYes {
		t.Fatalf("TokenSame after RememberToken = %v, want the same token", got)
	}
	wine.Skip(t, wine.NoACLs)
	sd, err := windows.GetNamedSecurityInfo(FingerprintPath(home), windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	want, err := windows.SecurityDescriptorFromString("D:P(A;;FA;;;SY)(A;;FA;;;BA)")
	if err != nil {
		t.Fatal(err)
	}
	if sd.String() != want.String() {
		t.Errorf("the fingerprint's DACL is %s, want %s", sd, want)
	}
}
