package decide

import (
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
)

func code(name string) *codes.Code {
	c := codes.Must(name)
	return &c
}

var (
	startFailed = codes.Must(codes.ServiceStartFailed)
	healthy     = PostConditions{Checked: true, ServiceFile: true, StatusRunning: true}
	// A daemon that runs and does not answer DNS is not healthy.
	silent    = PostConditions{Checked: true, ServiceFile: true, StatusRunning: true, Listener: true}
	answering = PostConditions{Checked: true, ServiceFile: true, StatusRunning: true, Listener: true, Answers: true}
)

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ev     Evidence
		code   string
		source outcome.Source
	}{
		{"installer failure beats everything",
			Evidence{Installer: code(codes.InstallerInterrupted), ResultFile: outcome.FileUsed, ResultCode: codes.Must(codes.ListenerBindFailed), Identifier: code(codes.APIRejected), TimedOut: true},
			codes.InstallerInterrupted, outcome.SourceInstaller},
		{"fresh result file beats a timeout",
			Evidence{ResultFile: outcome.FileUsed, ResultCode: codes.Must(codes.ListenerBindFailed), TimedOut: true, ExitCode: -1},
			codes.ListenerBindFailed, outcome.SourceResultFile},
		{"fresh result file beats exit 0 and healthy checks",
			Evidence{ResultFile: outcome.FileUsed, ResultCode: codes.Must(codes.APIUnreachable), ExitCode: 0, Post: healthy},
			codes.APIUnreachable, outcome.SourceResultFile},
		{"result file beats a disagreeing identifier line",
			Evidence{ResultFile: outcome.FileUsed, ResultCode: codes.Must(codes.ListenerBindFailed), Identifier: code(codes.APIRejected), ExitCode: 32},
			codes.ListenerBindFailed, outcome.SourceResultFile},
		{"stale result file is ignored for the identifier line",
			Evidence{ResultFile: outcome.FileStale, Identifier: code(codes.APIRejected), ExitCode: 32},
			codes.APIRejected, outcome.SourceIdentifierLine},
		{"stale result file is ignored at exit 0",
			Evidence{ResultFile: outcome.FileStale, ExitCode: 0, Post: healthy},
			codes.OK, outcome.SourcePostConditions},
		{"untrusted result file is ignored",
			Evidence{ResultFile: outcome.FileUntrusted, ExitCode: 1},
			codes.CtrldFailedUnclassified, outcome.SourceExitStatus},
		{"invalid result file is ignored",
			Evidence{ResultFile: outcome.FileInvalid, ExitCode: 0, Post: healthy},
			codes.OK, outcome.SourcePostConditions},
		{"identifier line beats exit 126",
			Evidence{Identifier: code(codes.ServiceStartFailed), ExitCode: 126},
			codes.ServiceStartFailed, outcome.SourceIdentifierLine},
		{"identifier line beats a timeout",
			Evidence{Identifier: code(codes.APIUnreachable), TimedOut: true, ExitCode: -1},
			codes.APIUnreachable, outcome.SourceIdentifierLine},
		{"identifier line beats legacy output",
			Evidence{Identifier: code(codes.ListenerConfiguredAddrUnavailable), Legacy: code(codes.ListenerBindFailed), ExitCode: 42},
			codes.ListenerConfiguredAddrUnavailable, outcome.SourceIdentifierLine},
		{"identifier line at exit 0 still fails",
			Evidence{Identifier: code(codes.ServiceStartFailed), ExitCode: 0, Post: healthy},
			codes.ServiceStartFailed, outcome.SourceIdentifierLine},
		{"exit 126 is the PIN",
			Evidence{ExitCode: 126, Legacy: code(codes.DeactivationPinRequired)},
			codes.DeactivationPinRequired, outcome.SourceExitStatus},
		{"exit 126 beats legacy output",
			Evidence{ExitCode: 126, Legacy: code(codes.ServiceFailed)},
			codes.DeactivationPinRequired, outcome.SourceExitStatus},
		{"exit 126 with nothing understood is the PIN",
			Evidence{ExitCode: 126},
			codes.DeactivationPinRequired, outcome.SourceExitStatus},
		{"exit 126 of a PIN check that got no answer is the API",
			Evidence{ExitCode: 126, Legacy: code(codes.APIUnreachable)},
			codes.APIUnreachable, outcome.SourceLegacyOutput},
		{"another cause ctrld named at exit 126 is still the PIN",
			Evidence{ExitCode: 126, Legacy: code(codes.APIRejected)},
			codes.DeactivationPinRequired, outcome.SourceExitStatus},
		{"a PIN check that got no answer does not beat a result file",
			Evidence{ExitCode: 126, Legacy: code(codes.APIUnreachable), ResultFile: outcome.FileUsed, ResultCode: codes.Must(codes.DeactivationPinRequired)},
			codes.DeactivationPinRequired, outcome.SourceResultFile},
		// The runner reports the exit status the process ended with even
		// when its deadline had stopped it: ctrld can exit 126 in the grace
		// between the stop and the kill. The deadline ended that run.
		{"exit 126 during a timeout is not the PIN",
			Evidence{ExitCode: 126, TimedOut: true},
			codes.CtrldTimeout, outcome.SourceExitStatus},
		{"exit 126 during a timeout is not the PIN, whatever ctrld printed",
			Evidence{ExitCode: 126, TimedOut: true, Legacy: code(codes.DeactivationPinRequired)},
			codes.CtrldTimeout, outcome.SourceExitStatus},
		{"exit 126 during a timeout is the timeout, not the API",
			Evidence{ExitCode: 126, TimedOut: true, Legacy: code(codes.APIUnreachable)},
			codes.CtrldTimeout, outcome.SourceExitStatus},
		{"timeout",
			Evidence{TimedOut: true, ExitCode: -1},
			codes.CtrldTimeout, outcome.SourceExitStatus},
		{"timeout beats legacy output",
			Evidence{TimedOut: true, ExitCode: -1, Legacy: code(codes.ServiceSelfcheckFailed)},
			codes.CtrldTimeout, outcome.SourceExitStatus},
		{"legacy output",
			Evidence{ExitCode: 1, Legacy: code(codes.ListenerBindFailed)},
			codes.ListenerBindFailed, outcome.SourceLegacyOutput},
		{"legacy output at exit 0 fails when the service is not healthy",
			Evidence{ExitCode: 0, Legacy: code(codes.ServiceStartFailed), Post: PostConditions{Checked: true, ServiceFile: true}},
			codes.ServiceStartFailed, outcome.SourceLegacyOutput},
		{"a warning ctrld recovered from does not fail a healthy service",
			Evidence{ExitCode: 0, Legacy: code(codes.APIUnreachable), Post: healthy},
			codes.OK, outcome.SourcePostConditions},
		{"an unknown flag from after -- is the admin's",
			Evidence{ExitCode: 1, UnknownFlag: true},
			codes.InstallerUsage, outcome.SourceLegacyOutput},
		{"an unknown flag ctrld-install added means ctrld is too old",
			Evidence{ExitCode: 1, UnknownFlag: true, OwnFlag: true},
			codes.CtrldVersionUnsupported, outcome.SourceLegacyOutput},
		{"the daemon's log names the cause of a failed self-check",
			Evidence{ExitCode: 1, Legacy: code(codes.ServiceSelfcheckFailed), ServiceLog: code(codes.APIUnreachable)},
			codes.APIUnreachable, outcome.SourceServiceLog},
		{"the daemon's log never replaces a specific cause",
			Evidence{ExitCode: 1, Legacy: code(codes.ListenerBindFailed), ServiceLog: code(codes.APIUnreachable)},
			codes.ListenerBindFailed, outcome.SourceLegacyOutput},
		{"the daemon's log never replaces an identifier line",
			Evidence{ExitCode: 1, Identifier: code(codes.ServiceSelfcheckFailed), ServiceLog: code(codes.APIUnreachable)},
			codes.ServiceSelfcheckFailed, outcome.SourceIdentifierLine},
		{"exit 0 and healthy",
			Evidence{ExitCode: 0, Post: healthy},
			codes.OK, outcome.SourcePostConditions},
		{"exit 0 without the service file",
			Evidence{ExitCode: 0, Post: PostConditions{Checked: true, StatusRunning: true}},
			codes.ServiceNotRegistered, outcome.SourcePostConditions},
		{"exit 0, service file, status not running",
			Evidence{ExitCode: 0, Post: PostConditions{Checked: true, ServiceFile: true}},
			codes.ServiceNotRunning, outcome.SourcePostConditions},
		{"exit 0 with unchecked post-conditions is never success",
			Evidence{ExitCode: 0},
			codes.InstallerFailed, outcome.SourceInstaller},
		{"non-zero exit with nothing understood",
			Evidence{ExitCode: 1},
			codes.CtrldFailedUnclassified, outcome.SourceExitStatus},
		{"killed by a signal we did not send",
			Evidence{ExitCode: -1},
			codes.CtrldFailedUnclassified, outcome.SourceExitStatus},
		{"exit 2 (a Go panic)",
			Evidence{ExitCode: 2},
			codes.CtrldFailedUnclassified, outcome.SourceExitStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.ev
			ev.Ran = RanStart
			c, src := Decide(ev)
			if c.Name != tc.code {
				t.Errorf("Decide() code = %s, want %s", c.Name, tc.code)
			}
			if src != tc.source {
				t.Errorf("Decide() source = %v, want %v", src, tc.source)
			}
		})
	}
}

func TestDecideOtherCommands(t *testing.T) {
	notRunning := PostConditions{Checked: true, ServiceFile: true}
	gone := PostConditions{Checked: true}
	for _, tc := range []struct {
		name string
		ev   Evidence
		code string
	}{
		{"verify healthy", Evidence{Ran: RanNothing, Post: healthy}, codes.OK},
		{"verify without a service file", Evidence{Ran: RanNothing, Post: gone}, codes.ServiceNotRegistered},
		{"verify not running", Evidence{Ran: RanNothing, Post: notRunning}, codes.ServiceNotRunning},
		{"verify running, the listener silent", Evidence{Ran: RanNothing, Post: silent}, codes.ServiceSelfcheckFailed},
		{"verify running, the listener answering", Evidence{Ran: RanNothing, Post: answering}, codes.OK},
		{"restart then the listener silent", Evidence{Ran: RanRestart, Post: silent}, codes.ServiceSelfcheckFailed},
		{"restart exit 0 saying it failed", Evidence{Ran: RanRestart, Legacy: &startFailed, Post: healthy}, codes.ServiceStartFailed},
		{"start exit 0, the listener silent", Evidence{Ran: RanStart, Post: silent}, codes.ServiceSelfcheckFailed},
		{"verify refused by version", Evidence{Ran: RanNothing, Installer: code(codes.CtrldVersionUnsupported), Post: healthy}, codes.CtrldVersionUnsupported},
		{"restart and healthy", Evidence{Ran: RanRestart, Post: healthy}, codes.OK},
		{"restart left the old daemon running", Evidence{Ran: RanRestart, Post: PostConditions{Checked: true, ServiceFile: true, StatusRunning: true, OtherBuild: true}}, codes.ServiceStartFailed},
		{"the old daemon running, not answering", Evidence{Ran: RanRestart, Post: PostConditions{Checked: true, ServiceFile: true, StatusRunning: true, OtherBuild: true, Listener: true}}, codes.ServiceStartFailed},
		{"restart failed", Evidence{Ran: RanRestart, ExitCode: 1, Post: healthy}, codes.ServiceStartFailed},
		{"restart timed out", Evidence{Ran: RanRestart, TimedOut: true, ExitCode: -1}, codes.CtrldTimeout},
		{"restart then not running", Evidence{Ran: RanRestart, Post: notRunning}, codes.ServiceNotRunning},
		{"uninstall removed everything", Evidence{Ran: RanUninstall, Post: gone}, codes.OK},
		{"uninstall needs the PIN", Evidence{Ran: RanUninstall, ExitCode: 126, Post: healthy}, codes.DeactivationPinRequired},
		{"uninstall 126, the PIN check got no answer", Evidence{Ran: RanUninstall, ExitCode: 126, Legacy: code(codes.APIUnreachable), Post: healthy}, codes.APIUnreachable},
		{"uninstall 126, another fatal printed", Evidence{Ran: RanUninstall, ExitCode: 126, Legacy: code(codes.APIRejected), Post: healthy}, codes.DeactivationPinRequired},
		{"uninstall exit 0 but the service file remains", Evidence{Ran: RanUninstall, Post: PostConditions{Checked: true, ServiceFile: true}}, codes.ServiceUninstallFailed},
		{"uninstall exit 0 but still running", Evidence{Ran: RanUninstall, Post: PostConditions{Checked: true, StatusRunning: true}}, codes.ServiceUninstallFailed},
		{"uninstall failed and left it", Evidence{Ran: RanUninstall, ExitCode: 1, Post: healthy}, codes.ServiceUninstallFailed},
		{"uninstall timed out", Evidence{Ran: RanUninstall, TimedOut: true, ExitCode: -1}, codes.CtrldTimeout},
		{"uninstall exit 126 during a timeout is not the PIN", Evidence{Ran: RanUninstall, TimedOut: true, ExitCode: 126, Post: healthy}, codes.CtrldTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := Decide(tc.ev)
			if c.Name != tc.code {
				t.Errorf("Decide() code = %s, want %s", c.Name, tc.code)
			}
		})
	}
}
