package explain

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

// Windows Installer's statuses, in every form an admin pastes them:
// msiexec's decimal, the HRESULT Intune and Windows show in hex, the same
// as Intune's reports print it (signed decimal), after a phrase, and as the
// IME log's lpExitCode.
func TestExplainWindowsInstallerStatuses(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1603, 1618, 1619, 1620, 1625, 1633, 3010, 1641} {
		hr := 0x80070000 | uint32(n)
		for _, input := range []string{
			fmt.Sprint(n),
			fmt.Sprintf("0x%08X", hr),
			fmt.Sprintf("0x%08x", hr),
			fmt.Sprint(int32(hr)),
			fmt.Sprintf("Error code: 0x%08X", hr),
			fmt.Sprintf("exit code %d", n),
			fmt.Sprintf("(%d)", int32(hr)),
			fmt.Sprintf("<![LOG[[Win32App] lpExitCode %d]LOG]!>\n<![LOG[[Win32App] Admin did NOT set mapping for lpExitCode: %d of app: %s]LOG]!>", n, n, canary),
		} {
			a, out := explainText(t, input)
			if a.MSI == nil || a.MSI.Status != n || a.Exit != n {
				t.Errorf("explain %q: MSI %+v, exit %d; want Windows Installer's %d", input, a.MSI, a.Exit, n)
				continue
			}
			st := a.MSI
			for _, want := range []string{st.Name, st.Message, st.NextStep, msiErrorCodes, fmt.Sprintf("0x%08X", hr), fmt.Sprint(int32(hr)), "not a ctrld-install code"} {
				if !strings.Contains(out, want) {
					t.Errorf("explain %q does not say %q:\n%s", input, want, out)
				}
			}
			if want := map[bool]string{true: "reporting a success", false: "reporting a failure"}[st.Success]; !strings.Contains(out, want) {
				t.Errorf("explain %q does not say %q:\n%s", input, want, out)
			}
		}
	}
	// 1618 is also what the intune profile reports for retryable codes:
	// both are said, msiexec's first.
	_, out := explainText(t, "1618")
	if i, j := strings.Index(out, "ERROR_INSTALL_ALREADY_RUNNING"), strings.Index(out, "--exit-profile intune"); i < 0 || j < i {
		t.Errorf("explain 1618:\n%s", out)
	}
	// An HRESULT that wraps no status of the table is not one of them.
	if _, err := Resolve("0x80070005"); !errors.Is(err, ErrUnknown) {
		t.Errorf("explain 0x80070005: %v, want ErrUnknown", err)
	}
}

// The table is Windows Installer's, apart from the registry: none of its
// statuses is a code's exit status or fits in the 8 bits macOS and Linux
// keep, and each says what it means for the project's MSI.
func TestWindowsInstallerTableIsApartFromTheRegistry(t *testing.T) {
	t.Parallel()
	for _, st := range msiStatuses {
		if c, ok := codes.ByExit(st.Status); ok {
			t.Errorf("%d is also %s's exit status", st.Status, c.Name)
		}
		if st.Status < 256 || st.Name == "" || st.Message == "" || st.Meaning == "" || st.NextStep == "" {
			t.Errorf("incomplete or not Windows-only: %+v", st)
		}
	}
	if st := msiStatus(1603); st == nil || st.Success || !strings.Contains(st.NextStep, msiLog) {
		t.Errorf("1603 must send the admin to the device's own code in %s: %+v", msiLog, st)
	}
	for _, n := range []int{3010, 1641} {
		if st := msiStatus(n); st == nil || !st.Success {
			t.Errorf("%d is a success: %+v", n, st)
		}
	}
}

// macOS Installer's failure sentence, as installer(8), Installer.app,
// Jamf's policy log and install.log print it.
func TestExplainMacInstallerFailure(t *testing.T) {
	t.Parallel()
	const scripts = "An error occurred while running scripts from the package “ctrld-install_1.5.0.pkg”."
	for _, tc := range []struct {
		name    string
		input   string
		scripts bool
		codes   []string
	}{
		{"installer(8)", "installer: Package name is ctrld-install\ninstaller: Installing at base path /\ninstaller: The install failed. (The Installer encountered an error that caused the installation to fail. Contact the software manufacturer for assistance. " + scripts + ")", true, nil},
		{"installer(8), no reason", "installer: The install failed.", false, nil},
		{"Installer.app", "The Installer encountered an error that caused the installation to fail. Contact the software manufacturer for assistance.", false, nil},
		{"install.log", "2026-11-29 10:14:05+01 mac-17 Installer[812]: Install failed: The Installer encountered an error that caused the installation to fail. Contact the software manufacturer for assistance.", false, nil},
		{"PackageKit", "PackageKit: Install Failed: Error Domain=PKInstallErrorDomain Code=112 \"" + scripts + "\"", true, nil},
		{"lower case", strings.ToLower("installer: The install failed."), false, nil},
		{"with the postinstall's failure line", "./postinstall: ctrld-install: provisioning failed: stage=listener code=LISTENER_BIND_FAILED (exit 41)\ninstaller: The install failed. (" + scripts + ")", true, []string{codes.ListenerBindFailed}},
	} {
		a, out := explainText(t, tc.input+" "+canary)
		if a.Mac == nil || a.Mac.Scripts != tc.scripts {
			t.Errorf("%s: Mac = %+v, want scripts=%v", tc.name, a.Mac, tc.scripts)
			continue
		}
		if got := names(a.Codes); !slices.Equal(got, append([]string{}, tc.codes...)) {
			t.Errorf("%s: codes %q, want %q", tc.name, got, tc.codes)
		}
		for _, want := range []string{"not a ctrld-install code", a.Mac.NextStep, "/var/log/install.log"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the answer does not say %q:\n%s", tc.name, want, out)
			}
		}
	}
}

// The .deb's maintainer scripts' own lines and dpkg's line for a script
// that failed: the exit status is read through the registry, never
// printed from the input.
func TestExplainDebLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		input string
		shown string
		codes []string
		pin   bool
	}{
		{"postinst, provisioning failed", "ctrld-install-postinst: provisioning ended with exit 41; the package stays installed. See the line above, /var/log/ctrld-install.log and '/usr/sbin/ctrld-install explain 41'.",
			"ctrld-install-postinst: provisioning ended with exit …", []string{codes.ListenerBindFailed}, false},
		{"postinst, no token", "ctrld-install-postinst: ctrld is not provisioned: no /etc/ctrld-install/token. Put the provisioning token there (owned by root, mode 0600)",
			"ctrld-install-postinst: ctrld is not provisioned", nil, false},
		{"prerm, PIN", "ctrld-install-prerm: error: ctrld could not be removed (exit 126), so the package stays; see the line above and /var/log/ctrld-install.log",
			"ctrld-install-prerm: error: ctrld could not be removed (exit …)", []string{codes.DeactivationPinRequired}, true},
		{"prerm, service", "ctrld-install-prerm: error: ctrld could not be removed (exit 56), so the package stays; see the line above and /var/log/ctrld-install.log",
			"ctrld-install-prerm: error: ctrld could not be removed (exit …)", []string{codes.ServiceUninstallFailed}, false},
		{"dpkg, postinst with a code's status", "dpkg: error processing package ctrld-install (--configure):\n installed ctrld-install package post-installation script subprocess returned error exit status 41",
			"installed ctrld-install package post-installation script subprocess returned error exit status …", []string{codes.ListenerBindFailed}, false},
		{"dpkg, postinst with the shell's status", "dpkg: error processing package ctrld-install (--configure):\n installed ctrld-install package post-installation script subprocess returned error exit status 2",
			"installed ctrld-install package post-installation script subprocess returned error exit status …", nil, false},
		{"dpkg, prerm", "dpkg: error processing package ctrld-install (--remove):\n installed ctrld-install package pre-removal script subprocess returned error exit status 1",
			"installed ctrld-install package pre-removal script subprocess returned error exit status …", nil, false},
		{"dpkg, postrm", "installed ctrld-install package post-removal script subprocess returned error exit status 1",
			"installed ctrld-install package post-removal script subprocess returned error exit status …", nil, false},
	} {
		a, out := explainText(t, tc.input+" "+canary)
		if len(a.Deb) != 1 || !strings.HasPrefix(a.Deb[0].Shown, tc.shown) {
			t.Errorf("%s: deb lines %+v, want one shown as %q", tc.name, a.Deb, tc.shown)
			continue
		}
		if got := names(a.Codes); !slices.Equal(got, append([]string{}, tc.codes...)) {
			t.Errorf("%s: codes %q, want %q", tc.name, got, tc.codes)
		}
		if (a.PIN != nil) != tc.pin || tc.pin && !strings.Contains(out, "(on uninstall)") {
			t.Errorf("%s: PIN advice %+v, want %v:\n%s", tc.name, a.PIN, tc.pin, out)
		}
		if !strings.Contains(out, a.Deb[0].NextStep) {
			t.Errorf("%s: no next step:\n%s", tc.name, out)
		}
		if slices.Contains(names(a.Codes), codes.InstallerFailed) {
			t.Errorf("%s: read as a script that stopped before ctrld-install ran:\n%s", tc.name, out)
		}
	}
	// A status no table holds is not printed: only the registry's numbers
	// are.
	for _, input := range []string{
		"ctrld-install-postinst: provisioning ended with exit 199; the package stays installed.",
		"installed ctrld-install package post-installation script subprocess returned error exit status 199",
	} {
		if _, out := explainText(t, input); strings.Contains(out, "199") {
			t.Errorf("explain %q repeats its number:\n%s", input, out)
		}
	}
	// Another package's failure is not this package's.
	if _, err := Resolve("installed foo package post-installation script subprocess returned error exit status 41"); !errors.Is(err, ErrUnknown) {
		t.Errorf("another package's dpkg line: %v, want ErrUnknown", err)
	}
}
