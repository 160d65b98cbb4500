package explain

import (
	"regexp"
	"strconv"

	"sync"
)

// IntuneStatus is a number Intune itself reports about a Win32 app in its
// console and logs, as opposed to the app's exit status: what Microsoft
// says it means, and what it means for ctrld-install's package.
type IntuneStatus struct {
	Hex      uint32
	Message  string // Microsoft's text
	Meaning  string // for a ctrld-install Win32 app
	NextStep string
	Source   string // Microsoft's page that lists it
}

// Decimal is the status as Intune's reports print it in decimal: the
// 32-bit value read as signed.
func (s IntuneStatus) Decimal() int64 { return int64(int32(s.Hex)) }

// appInstallErrors is Microsoft's "Intune app installation error
// reference" (the same page in every language of Microsoft Learn).
const appInstallErrors = "https://learn.microsoft.com/troubleshoot/mem/intune/app-management/app-install-error-codes"

// intuneStatuses are the statuses listed on Microsoft's pages that a
// ctrld-install Win32 app can be given. Add one only with the page that
// lists it.
var intuneStatuses = []IntuneStatus{
	{
		Hex:      0x87D1041C,
		Message:  "The application was not detected after installation completed successfully.",
		Meaning:  "The install command (install.ps1, which exits with ctrld-install's status) ended with a status Intune counts as success, but the detection script (detect.ps1, which runs ctrld-install verify) did not then report ctrld as installed: the run reported success and verify disagreed, or detect.ps1's $MinVersion is newer than the ctrld in the package, or ctrld runs under someone else's deactivation PIN (the intune profile exits 0 for it, a device settled as it is) and is older than $MinVersion.",
		NextStep: "On the device, read the last lines of C:\\ProgramData\\Microsoft\\IntuneManagementExtension\\Logs\\ctrld-install.log and run C:\\ControlD\\ctrld-install.exe verify --min-version with detect.ps1's $MinVersion; ctrld-install explain what each prints. If verify succeeds, align $MinVersion with the package's ctrld.",
		Source:   appInstallErrors,
	},
}

// intuneStatusRE finds an Intune status in pasted text: eight hex digits
// after 0x, or the signed decimal Intune's exports use.
var intuneStatusRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b0x([0-9a-f]{8})\b|(?:^|[^0-9])(-2[0-9]{9})\b`)
})

// intuneStatusIn finds the first registered Intune status s names.
func intuneStatusIn(s string) (*IntuneStatus, bool) {
	for _, m := range intuneStatusRE().FindAllStringSubmatch(s, -1) {
		var v uint32
		switch {
		case m[1] != "":
			n, err := strconv.ParseUint(m[1], 16, 32)
			if err != nil {
				continue
			}
			v = uint32(n)
		default:
			n, err := strconv.ParseInt(m[2], 10, 64)
			if err != nil || n < -1<<31 {
				continue
			}
			v = uint32(int32(n))
		}
		for i := range intuneStatuses {
			if intuneStatuses[i].Hex == v {
				return &intuneStatuses[i], true
			}
		}
	}
	return nil, false
}

// imeExitRE is the Intune Management Extension's log line for the exit
// status of a Win32 app's command: "[Win32App] lpExitCode 41".
var imeExitRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\blpExitCode[ \t:=]*([0-9]{1,6})\b`)
})

// imeExit is the exit status the IME lines in s agree on.
func imeExit(s string) (int, bool) {
	found, n := false, 0
	for _, m := range imeExitRE().FindAllStringSubmatch(s, -1) {
		v, err := strconv.Atoi(m[1])
		if err != nil || found && v != n {
			return 0, false
		}
		found, n = true, v
	}
	return n, found
}
