package profile

import (
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

func TestExitStatus(t *testing.T) {
	m := codes.Must
	for _, tc := range []struct {
		p       Name
		code    string
		skipped bool
		want    int
	}{
		{Default, codes.OK, false, 0},
		{Default, codes.ListenerBindFailed, false, 41},
		{Default, codes.DeactivationPinRequired, false, 126},
		{Intune, codes.APIUnreachable, false, 1618},
		{Intune, codes.CtrldTimeout, false, 1618},
		{Intune, codes.InstallerBusy, false, 1618},
		{Intune, codes.ListenerBindFailed, false, 41},
		{Intune, codes.APIResponseInvalid, false, 1618},
		{Intune, codes.APITLSFailed, false, 37},
		{Intune, codes.OK, false, 0},
		{Intune, codes.DeactivationPinRequired, false, 0},
		{Intune, codes.ServiceUninstallFailed, false, 56},
		{FileWave, codes.OK, false, 0},
		{FileWave, codes.OK, true, 210},
		{FileWave, codes.DeactivationPinRequired, false, 210},
		{FileWave, codes.ListenerBindFailed, false, 220},
		{FileWave, codes.InstallerUsage, false, 220},
		{FileWave, codes.APIUnreachable, false, 31},
		{FileWave, codes.APITLSFailed, false, 220},
		{FileWave, codes.APIResponseInvalid, false, 36},
		{Default, codes.APIResponseInvalid, false, 36},
		{Default, codes.APITLSFailed, false, 37},
		{Jamf, codes.APITLSFailed, false, 37},
		{Jamf, codes.DeactivationPinRequired, false, 0},
		{Jamf, codes.ListenerBindFailed, false, 41},
		{Jamf, codes.OK, true, 0},
	} {
		if got := ExitStatus(tc.p, m(tc.code), tc.skipped); got != tc.want {
			t.Errorf("ExitStatus(%s, %s, skipped=%v) = %d, want %d", tc.p, tc.code, tc.skipped, got, tc.want)
		}
	}
}

func TestEveryProfileKeepsSuccessZeroAndFailureNonZero(t *testing.T) {
	for _, p := range Names {
		for _, c := range codes.All() {
			got := ExitStatus(p, c, false)
			switch {
			case c.IsOK():
				if got != 0 {
					t.Errorf("ExitStatus(%s, %s) = %d, want 0", p, c.Name, got)
				}
			case c.Class == codes.ClassAlreadyManaged:
				// settled: 0 under intune and jamf by design
			default:
				if got == 0 {
					t.Errorf("ExitStatus(%s, %s) = 0: a failure must not read as success", p, c.Name)
				}
			}
		}
	}
	if !Valid("intune") || Valid("Intune") {
		t.Errorf("Valid: profile names are lower case and exact")
	}
}

// A device managed under another deactivation PIN is settled for every
// profile meant for a tool that re-runs the job: nothing a re-run can
// change, so it is not a failure there. Only default, for a run by hand or
// a tool that shows the code itself, keeps the code's own number.
func TestAlreadyManagedIsSettledForToolsThatReRun(t *testing.T) {
	for _, c := range codes.All() {
		if c.Class != codes.ClassAlreadyManaged {
			continue
		}
		for p, want := range map[Name]int{Default: c.Exit, Intune: 0, Jamf: 0, FileWave: 210} {
			if got := ExitStatus(p, c, false); got != want {
				t.Errorf("ExitStatus(%s, %s) = %d, want %d", p, c.Name, got, want)
			}
		}
	}
}
