package explain

import (
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

// The platforms' own installers report about this project's packages in
// their own numbers and sentences: Windows Installer (msiexec, and Intune,
// GPO and RMM tools that show its status), macOS Installer (installer(8),
// Installer.app, install.log) and dpkg. None of them is a ctrld-install
// code, so they are kept here, apart from the registry (internal/codes),
// each with what it means for this project's package and the next step.

// MSIStatus is an exit status of msiexec, as Windows Installer documents
// it, and what it means for the project's MSI (scripts/msi).
type MSIStatus struct {
	Status   int
	Name     string // Windows Installer's constant
	Message  string // Microsoft's words
	Meaning  string // for the project's MSI
	NextStep string
	Success  bool // Windows Installer counts it as a success
}

// HResult is the status as Intune and Windows show it in hexadecimal
// (HRESULT_FROM_WIN32).
func (s MSIStatus) HResult() uint32 { return 0x80070000 | uint32(s.Status) }

// Decimal is HResult as Intune's reports print it: signed.
func (s MSIStatus) Decimal() int64 { return int64(int32(s.HResult())) }

// msiErrorCodes is Microsoft's "MsiExec.exe and InstMsi.exe error
// messages" page, which lists every status below.
const msiErrorCodes = "https://learn.microsoft.com/windows/win32/msi/error-codes"

// msiLog is where the project's MSI keeps ctrld-install's lines; the
// rollback of a failed installation removes the binaries but not the log
// or the outcome record.
const msiLog = `C:\ControlD\ctrld-install.log`

// msiStatuses are the statuses an admin meets with the project's MSI.
// Its provisioning and uninstall steps are custom actions that fail the
// installation on any status but 0, and Windows Installer then ends with
// 1603 whatever the code was: the code itself is only on the device.
var msiStatuses = []MSIStatus{
	{
		Status:   1603,
		Name:     "ERROR_INSTALL_FAILURE",
		Message:  "A fatal error occurred during installation.",
		Meaning:  "The MSI's provisioning step (ctrld-install install, run as SYSTEM after the files are laid) ended with a failure code, retryable ones included, or a step before it failed (the permissions of C:\\ControlD); at removal, ctrld-install uninstall failed (most often a deactivation PIN is needed). Windows Installer rolled the change back and reports 1603 for every one of them: it is the only failure status the project's MSI returns.",
		NextStep: "Read the device's own code: Get-Content " + msiLog + " -Tail 2 (the rollback removes ctrld-install.exe but keeps its log and C:\\ControlD\\ctrld-install-result.json), or C:\\ControlD\\ctrld-install.exe status where it is still installed; then ctrld-install explain CODE. The msiexec /l*v log names the custom action that failed.",
	},
	{
		Status:   1618,
		Name:     "ERROR_INSTALL_ALREADY_RUNNING",
		Message:  "Another installation is already in progress. Complete that installation before proceeding with this install.",
		Meaning:  "From msiexec: another Windows Installer installation (Windows Update, another app's package) was running, so this one did not start; nothing changed and ctrld-install did not run. The project's MSI never returns 1618 for a code of its own: a custom action cannot end an installation with it. From install.ps1 (an Intune Win32 app, or a script run with the intune exit profile) 1618 is instead ctrld-install's retryable codes, below.",
		NextStep: "Retry later: Intune and most RMM tools retry 1618 by themselves. If it persists, find the other installation (msiexec processes, the Application event log's MsiInstaller entries) and let it finish or reboot the PC.",
	},
	{
		Status:   1619,
		Name:     "ERROR_INSTALL_PACKAGE_OPEN_FAILED",
		Message:  "This installation package could not be opened. Verify that the package exists and that you can access it, or contact the application vendor to verify that this is a valid Windows Installer package.",
		Meaning:  "msiexec could not open the .msi: a wrong path in the command, a download that did not finish, or a file SYSTEM cannot read. Nothing was installed and ctrld-install did not run.",
		NextStep: "Check the path in the tool's msiexec command and that the file on the device is complete (compare its size and hash with the MSI built by scripts/msi/build-msi.sh), then deploy again.",
	},
	{
		Status:   1620,
		Name:     "ERROR_INSTALL_PACKAGE_INVALID",
		Message:  "This installation package could not be opened. Contact the application vendor to verify that this is a valid Windows Installer package.",
		Meaning:  "The file is not a valid Windows Installer package: a damaged or truncated copy, or a file that is not the MSI (the release carries no MSI; scripts/msi/build-msi.sh builds it). Nothing was installed.",
		NextStep: "Build the MSI again with scripts/msi/build-msi.sh, or upload it again, and compare the hash on the device with the built one.",
	},
	{
		Status:   1625,
		Name:     "ERROR_INSTALL_PACKAGE_REJECTED",
		Message:  "This installation is forbidden by system policy. Contact your system administrator.",
		Meaning:  "A policy on the PC forbids this installation (Group Policy's Turn off Windows Installer, AppLocker or a software restriction rule for MSI files, or a non-administrator running it). Nothing was installed.",
		NextStep: "Deploy it as SYSTEM through the MDM, GPO or RMM tool, or allow the package in the policy that blocks it (gpresult /h shows the policies applied).",
	},
	{
		Status:   1633,
		Name:     "ERROR_INSTALL_PLATFORM_UNSUPPORTED",
		Message:  "This installation package is not supported by this processor type. Contact your product vendor.",
		Meaning:  "The MSI is built for 64-bit x86 Windows (windows_amd64), and this PC's Windows cannot install it (32-bit Windows). Nothing was installed.",
		NextStep: "Deploy it to 64-bit Windows only (in Intune, the app's requirement: 64-bit operating system architecture).",
	},
	{
		Status:   3010,
		Name:     "ERROR_SUCCESS_REBOOT_REQUIRED",
		Message:  "A restart is required to complete the install. This message indicates success. This does not include installs where the ForceReboot action is run.",
		Meaning:  "Success: the MSI installed (and its provisioning step, when it ran, succeeded), but a file it replaces was in use (most often ctrld.exe while ctrld's service ran) and is replaced at the next restart; until then the old file stays in use.",
		NextStep: "Nothing to fix: restart the PC when convenient (Intune, by default, treats 3010 as a soft reboot), then C:\\ControlD\\ctrld-install.exe verify shows the ctrld that runs.",
		Success:  true,
	},
	{
		Status:   1641,
		Name:     "ERROR_SUCCESS_REBOOT_INITIATED",
		Message:  "The installer has initiated a restart. This message indicates success.",
		Meaning:  "Success: the MSI installed and Windows Installer restarted the PC itself to finish, because the command allowed it.",
		NextStep: "Nothing to fix. Add /norestart to the msiexec command to leave restarts to the tool (it then gets 3010 instead); after the restart, C:\\ControlD\\ctrld-install.exe verify shows the ctrld that runs.",
		Success:  true,
	},
}

func msiStatus(n int) *MSIStatus {
	for i := range msiStatuses {
		if msiStatuses[i].Status == n {
			return &msiStatuses[i]
		}
	}
	return nil
}

// MacInstallerFailure is macOS Installer's sentence for a package that did
// not install, as installer(8), Installer.app, Jamf and install.log show
// it. Scripts says it names a script of the package as what failed.
type MacInstallerFailure struct {
	Scripts  bool
	Meaning  string
	NextStep string
}

var macInstallerFailures = [2]MacInstallerFailure{
	{
		Meaning:  "macOS Installer did not install the package, and does not say why in this sentence: a script of the package failed, or the package itself was refused (its signature, the Mac's policy, no space on the disk). This project's provisioning package fails when its postinstall does, whose exit status is ctrld-install's; its uninstall package fails when ctrld-install uninstall does, or exits 60 when ctrld-install is already gone; the release's ctrld-install package runs no script.",
		NextStep: "On the Mac, grep -E 'ctrld-install|PackageKit' /var/log/install.log | tail -20: a failure line with code= names ctrld-install's code (paste it to ctrld-install explain); otherwise the Installer's own error says why it refused the package.",
	},
	{
		Scripts:  true,
		Meaning:  "macOS Installer ran a script of the package and it failed. With this project's packages that is the provisioning package's postinstall, whose exit status is ctrld-install's (a failed provisioning fails the package), or the uninstall package's, which exits with ctrld-install uninstall's status (60 when ctrld-install is already gone). The code is on ctrld-install's lines in /var/log/install.log, not in this sentence.",
		NextStep: "On the Mac, grep ctrld-install /var/log/install.log | tail -3 shows the script's last lines, the failure line with its code last; sudo /usr/local/bin/ctrld-install status shows the outcome record. Then ctrld-install explain CODE.",
	},
}

// macInstallerRE finds macOS Installer's failure sentences, in any case:
// Installer.app's and installer(8)'s, and the reason install.log and
// installer(8) add for a script that failed.
var macInstallerRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(the installer encountered an error that caused the installation to fail|installer: the install failed)|(an error occurred while running scripts from the package)`)
})

func macInstallerIn(s string) *MacInstallerFailure {
	found := -1
	for _, m := range macInstallerRE().FindAllStringSubmatchIndex(s, -1) {
		switch {
		case m[4] >= 0:
			found = 1
		case found < 0:
			found = 0
		}
	}
	if found < 0 {
		return nil
	}
	return &macInstallerFailures[found]
}

// DebLine is a line about the .deb's maintainer scripts: one of their own
// (postinst, prerm) or dpkg's for one that failed. Code, when set, is the
// code the line's exit status is registered with; the number itself is
// never printed from the input.
type DebLine struct {
	Shown     string // the line's fixed text, "…" for what varies
	Who       string // whose line it is
	Meaning   string
	NextStep  string
	Code      *codes.Code
	Exit      int  // the exit status the line carries, when HasExit
	HasExit   bool // the line carries one
	uninstall bool // an uninstall's status, read with uninstall's advice
}

// debScripts are the maintainer scripts dpkg names, as its lines name them.
var debScripts = map[string]string{
	"post-installation": "postinst",
	"pre-removal":       "prerm",
	"post-removal":      "postrm",
	"pre-installation":  "preinst",
}

// debLineRE finds the lines: the postinst's two, the prerm's refusal, and
// dpkg's "installed ctrld-install package <script> script subprocess
// returned error exit status N" (dpkg 1.19 and later).
var debLineRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`ctrld-install-postinst: provisioning ended with exit ([0-9]{1,3});` +
		`|ctrld-install-postinst: ctrld is not provisioned: ` +
		`|ctrld-install-prerm: error: ctrld could not be removed \(exit ([0-9]{1,3})\)` +
		`|(?i:(?:installed|new|old) ctrld-install package (post-installation|pre-removal|post-removal|pre-installation) script subprocess returned error exit status ([0-9]{1,3}))`)
})

// debLinesIn lists the .deb lines in s, each kind once, in order.
func debLinesIn(s string) []DebLine {
	var out []DebLine
	seen := map[string]bool{}
	for _, m := range debLineRE().FindAllStringSubmatch(s, -1) {
		l := DebLine{Who: "the .deb package's"}
		switch {
		case m[1] != "":
			l = DebLine{Who: l.Who, Shown: "ctrld-install-postinst: provisioning ended with exit …; the package stays installed. …",
				Meaning:  "The .deb's postinst ran ctrld-install install with /etc/ctrld-install/token and it failed with the code below. The package is installed and apt reports success: a failed provisioning never fails the package (dpkg would otherwise leave it half-configured and stop every later apt run on it).",
				NextStep: "Act on the code below, then run /usr/sbin/ctrld-install install --token-file /etc/ctrld-install/token --log /var/log/ctrld-install.log (or install the package again); /usr/sbin/ctrld-install verify exits 0 once ctrld is healthy.",
			}
			l.Exit, l.HasExit = atoi(m[1])
		case strings.Contains(m[0], "is not provisioned"):
			l = DebLine{Who: l.Who, Shown: "ctrld-install-postinst: ctrld is not provisioned: no /etc/ctrld-install/token. …",
				Meaning:  "The .deb installed ctrld-install, but found no /etc/ctrld-install/token (nor resolver) to provision with, so it provisioned nothing. Not a failure: apt reports success.",
				NextStep: "Put the token in /etc/ctrld-install/token (owned by root, mode 0600) and run /usr/sbin/ctrld-install install --token-file /etc/ctrld-install/token, or write the file before installing the package.",
			}
		case m[2] != "":
			l = DebLine{Who: l.Who, Shown: "ctrld-install-prerm: error: ctrld could not be removed (exit …), so the package stays; …",
				Meaning:   "apt-get remove ran the .deb's prerm, which runs ctrld-install uninstall; ctrld could not be removed (the code below), so the prerm failed on purpose and the package stays installed, ctrld still running.",
				NextStep:  "For DEACTIVATION_PIN_REQUIRED, put the device's deactivation PIN in /etc/ctrld-install/deactivation_pin (owned by root, mode 0600) and run apt-get remove ctrld-install again; otherwise act on the code below and run it again.",
				uninstall: true,
			}
			l.Exit, l.HasExit = atoi(m[2])
		default:
			script := debScripts[strings.ToLower(m[3])]
			l = debFailure(script)
			l.Who = "dpkg's, about the .deb package"
			if script == "postinst" {
				l.Exit, l.HasExit = atoi(m[4])
			}
		}
		if seen[l.Shown] {
			continue
		}
		seen[l.Shown] = true
		if l.HasExit {
			if c, ok := codes.ByExit(l.Exit); ok {
				l.Code = &c
			}
		}
		out = append(out, l)
	}
	return out
}

// debFailure is dpkg's line for a maintainer script of the package that
// failed. The prerm exits 1 whatever stopped ctrld's removal, so only the
// postinst's status is read through the registry.
func debFailure(script string) DebLine {
	shown := "installed ctrld-install package " + map[string]string{"postinst": "post-installation", "prerm": "pre-removal", "postrm": "post-removal", "preinst": "pre-installation"}[script] + " script subprocess returned error exit status …"
	switch script {
	case "postinst":
		return DebLine{Shown: shown,
			Meaning:  "dpkg ran the package's postinst and it failed, so dpkg left ctrld-install half-configured and apt tries again at its next run. The project's postinst ends 0 whatever provisioning ended with (its own line says the code), so a failing postinst failed itself: the shell's status, or, for a postinst that was changed to pass ctrld-install's status on, the code below.",
			NextStep: "Run dpkg --configure ctrld-install to see the postinst's lines again (ctrld-install's, then ctrld-install-postinst's), paste them to ctrld-install explain, and fix what they name; /usr/sbin/ctrld-install verify exits 0 once ctrld is healthy.",
		}
	case "prerm":
		return DebLine{Shown: shown,
			Meaning:  "dpkg ran the package's prerm at removal and it failed, so the package stays installed with ctrld running. The prerm fails on purpose when ctrld-install uninstall cannot remove ctrld; its own line just before, ctrld-install-prerm: error: ctrld could not be removed (exit …), has the uninstall's status (126: a deactivation PIN is needed).",
			NextStep: "Read the ctrld-install-prerm line above it and the last lines of /var/log/ctrld-install.log; for a PIN, put it in /etc/ctrld-install/deactivation_pin (owned by root, mode 0600) and run apt-get remove ctrld-install again.",
		}
	case "postrm":
		return DebLine{Shown: shown,
			Meaning:  "dpkg ran the package's postrm, which at purge deletes /etc/ctrld-install and the log, and it failed; ctrld itself was already removed by the prerm.",
			NextStep: "Run dpkg --purge ctrld-install again and read its lines; remove /etc/ctrld-install by hand if it stays.",
		}
	}
	return DebLine{Shown: shown,
		Meaning:  "dpkg ran a pre-installation script of the package and it failed; the project's .deb has none, so this package is not the project's.",
		NextStep: "Check that the package installed is the release's ctrld-install_<version>_linux_<arch>.deb (dpkg-deb -I FILE).",
	}
}

func atoi(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil
}
