//go:build windows

package home

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// canary is in every path, and must be in no error.
const canary = "CANARYPATH0123456789"

// withDACL makes a directory whose own DACL is sddl, owned by the process.
func withDACL(t *testing.T, sddl string) string {
	t.Helper()
	p := filepath.Join(wine.TempDir(t), canary)
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		t.Fatal(err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		t.Fatal(err)
	}
	if err := windows.SetNamedSecurityInfo(p, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		t.Fatalf("SetNamedSecurityInfo(%s): %v", sddl, err)
	}
	return p
}

func TestCheckACL(t *testing.T) {
	wine.Skip(t, wine.NoACLs)
	for _, tc := range []struct {
		name string
		sddl string
		want error
	}{
		{"as Prepare makes it", homeSDDL, nil},
		{"users may read", "D:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;0x1200a9;;;BU)", nil},
		{"users may modify", "D:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;0x1301bf;;;BU)", ErrWritable},
		{"everyone may write", "D:P(A;;FA;;;SY)(A;;FA;;;BA)(A;;FW;;;WD)", ErrWritable},
		{"everyone may add a file", "D:P(A;;FA;;;SY)(A;;0x2;;;WD)", ErrWritable},
		{"everyone may change the ACL", "D:P(A;;FA;;;SY)(A;;WD;;;WD)", ErrWritable},
		{"an entry for children only", "D:P(A;;FA;;;SY)(A;OICIIO;FA;;;WD)", nil},
		{"a deny entry", "D:P(A;;FA;;;SY)(D;;FA;;;WD)", nil},
		{"a null DACL grants everyone everything", "D:NO_ACCESS_CONTROL", ErrWritable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := withDACL(t, tc.sddl)
			err := Default.Check(dir)
			if tc.want == nil && err != nil {
				t.Errorf("Check: %v", err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("Check = %v, want %v", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), canary) {
				t.Errorf("Check = %q: the error holds the path", err)
			}
		})
	}
}

// A home owned by someone other than SYSTEM, Administrators or the account
// running is refused.
func TestCheckOwnerOnWindows(t *testing.T) {
	wine.Skip(t, wine.NoACLs)
	dir := withDACL(t, homeSDDL)
	users, err := windows.CreateWellKnownSid(windows.WinBuiltinUsersSid)
	if err != nil {
		t.Fatal(err)
	}
	// Giving a file away needs SeRestorePrivilege, which an elevated
	// administrator holds but may not have enabled.
	if err := windows.SetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION, users, nil, nil, nil); err != nil {
		t.Skipf("cannot make Users the owner here: %v", err)
	}
	if err := Default.Check(dir); !errors.Is(err, ErrNotOwned) {
		t.Errorf("Check(a home Users own) = %v, want %v", err, ErrNotOwned)
	}
}

func TestPrepareOnWindows(t *testing.T) {
	root := wine.TempDir(t)
	dir := filepath.Join(root, "a", canary)
	if err := Prepare(dir); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if err := Prepare(dir); err != nil {
		t.Errorf("Prepare a second time: %v", err)
	}
	f := filepath.Join(root, "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Default.Check(f); !errors.Is(err, ErrNotDir) {
		t.Errorf("Check(a file) = %v, want %v", err, ErrNotDir)
	}
	err := Default.Check(filepath.Join(root, canary))
	if !errors.Is(err, ErrMissing) {
		t.Errorf("Check(missing) = %v, want %v", err, ErrMissing)
	}
	if err != nil && strings.Contains(err.Error(), canary) {
		t.Errorf("Check = %q: the error holds the path", err)
	}
}

// The home gets its own ACL, not the parent's: protected, exactly
// homeSDDL's entries.
func TestPrepareSetsTheHomesOwnACL(t *testing.T) {
	wine.Skip(t, wine.NoACLs)
	dir := filepath.Join(wine.TempDir(t), canary)
	if err := Prepare(dir); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	sd, err := windows.GetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	want, err := windows.SecurityDescriptorFromString(homeSDDL)
	if err != nil {
		t.Fatal(err)
	}
	if got := sd.String(); got != want.String() {
		t.Errorf("the home's DACL is %s, want %s", got, want)
	}
}

// A symbolic link or a junction in the home's place is refused.
func TestCheckRefusesALink(t *testing.T) {
	wine.Skip(t, wine.NoSymlinks)
	root := wine.TempDir(t)
	target := filepath.Join(root, "target")
	if err := Prepare(target); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, canary)
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot make a symbolic link here: %v", err)
	}
	if err := Default.Check(link); !errors.Is(err, ErrSymlink) {
		t.Errorf("Check(a symbolic link) = %v, want %v", err, ErrSymlink)
	}
}
