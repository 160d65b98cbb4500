// Package profile maps an outcome to the exit status a particular consumer
// understands. Only the process exit status changes: every other surface
// carries the registry's code and exit number.
package profile

import (
	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

// Name is an exit profile's name as given to --exit-profile.
type Name string

const (
	Default  Name = "default"  // the registry's exit numbers
	Intune   Name = "intune"   // retryable → 1618, which Intune retries; already managed → 0
	FileWave Name = "filewave" // already managed or skipped → 210, fatal → 220 (no retry)
	// Jamf: already managed → 0, so a PIN-protected machine is not a failed
	// policy. It is the profile for every tool that re-runs a script on a
	// schedule (Jamf, RMM tools, Intune's macOS shell scripts): a device
	// managed under another deactivation PIN is settled, nothing a re-run
	// can change, and must not fail the job every day.
	Jamf Name = "jamf"
)

// Names lists the profiles in the order the usage text shows them.
var Names = []Name{Default, Intune, FileWave, Jamf}

// Valid reports whether n names a profile.
func Valid(n string) bool {
	for _, x := range Names {
		if string(x) == n {
			return true
		}
	}
	return false
}

// ExitStatus is the process exit status for code c under profile n.
// skipped says the run found ctrld healthy and did nothing.
//
// macOS and Linux keep only the low 8 bits of an exit status, so 1618 is a
// Windows-only meaning; elsewhere it reads as 82.
func ExitStatus(n Name, c codes.Code, skipped bool) int {
	switch n {
	case Intune:
		// A Win32 app's install that exits 0 is followed by its detection
		// script, which finds the PIN-protected ctrld running: installed,
		// settled. Uninstall scripts use the default profile, where a
		// missing PIN stays a failure.
		switch c.Class {
		case codes.ClassRetryable:
			return 1618
		case codes.ClassAlreadyManaged:
			return 0
		}
	case FileWave:
		switch {
		case c.IsOK() && skipped, c.Class == codes.ClassAlreadyManaged:
			return 210
		case c.Class == codes.ClassFatal:
			return 220
		}
	case Jamf:
		if c.Class == codes.ClassAlreadyManaged {
			return 0
		}
	}
	return c.Exit
}
