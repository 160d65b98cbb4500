package decide

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/resultfile"
)

func code(name string) *codes.Code {
	c := codes.Must(name)
	return &c
}

func used(name string) resultfile.Finding {
	return resultfile.Finding{Status: resultfile.Used, Code: codes.Must(name)}
}

var healthy = PostConditions{Checked: true, ServiceFile: true, StatusRunning: true}

func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ev     Evidence
		code   string
		source Source
	}{
		{"installer failure beats everything",
			Evidence{Installer: code(codes.InstallerInterrupted), ResultFile: used(codes.ListenerBindFailed), Identifier: code(codes.APIRejected), TimedOut: true},
			codes.InstallerInterrupted, SourceInstaller},
		{"fresh result file beats a timeout",
			Evidence{ResultFile: used(codes.ListenerBindFailed), TimedOut: true, ExitCode: -1},
			codes.ListenerBindFailed, SourceResultFile},
		{"fresh result file beats exit 0 and healthy checks",
			Evidence{ResultFile: used(codes.APIUnreachable), ExitCode: 0, Post: healthy},
			codes.APIUnreachable, SourceResultFile},
		{"result file beats a disagreeing identifier line",
			Evidence{ResultFile: used(codes.ListenerBindFailed), Identifier: code(codes.APIRejected), ExitCode: 32},
			codes.ListenerBindFailed, SourceResultFile},
		{"stale result file is ignored for the identifier line",
			Evidence{ResultFile: resultfile.Finding{Status: resultfile.Stale}, Identifier: code(codes.APIRejected), ExitCode: 32},
			codes.APIRejected, SourceIdentifierLine},
		{"stale result file is ignored at exit 0",
			Evidence{ResultFile: resultfile.Finding{Status: resultfile.Stale}, ExitCode: 0, Post: healthy},
			codes.OK, SourcePostConditions},
		{"untrusted result file is ignored",
			Evidence{ResultFile: resultfile.Finding{Status: resultfile.Untrusted}, ExitCode: 1},
			codes.CtrldFailedUnclassified, SourceExitStatus},
		{"invalid result file is ignored",
			Evidence{ResultFile: resultfile.Finding{Status: resultfile.Invalid}, ExitCode: 0, Post: healthy},
			codes.OK, SourcePostConditions},
		{"identifier line beats exit 126",
			Evidence{Identifier: code(codes.ServiceStartFailed), ExitCode: 126},
			codes.ServiceStartFailed, SourceIdentifierLine},
		{"identifier line beats a timeout",
			Evidence{Identifier: code(codes.APIUnreachable), TimedOut: true, ExitCode: -1},
			codes.APIUnreachable, SourceIdentifierLine},
		{"identifier line beats legacy output",
			Evidence{Identifier: code(codes.ListenerConfiguredAddrUnavailable), Legacy: code(codes.ListenerBindFailed), ExitCode: 42},
			codes.ListenerConfiguredAddrUnavailable, SourceIdentifierLine},
		{"identifier line at exit 0 still fails",
			Evidence{Identifier: code(codes.ServiceStartFailed), ExitCode: 0, Post: healthy},
			codes.ServiceStartFailed, SourceIdentifierLine},
		{"exit 126 is the PIN",
			Evidence{ExitCode: 126, Legacy: code(codes.DeactivationPinRequired)},
			codes.DeactivationPinRequired, SourceExitStatus},
		{"exit 126 beats legacy output",
			Evidence{ExitCode: 126, Legacy: code(codes.ServiceFailed)},
			codes.DeactivationPinRequired, SourceExitStatus},
		{"timeout",
			Evidence{TimedOut: true, ExitCode: -1},
			codes.CtrldTimeout, SourceExitStatus},
		{"timeout beats legacy output",
			Evidence{TimedOut: true, ExitCode: -1, Legacy: code(codes.ServiceSelfcheckFailed)},
			codes.CtrldTimeout, SourceExitStatus},
		{"legacy output",
			Evidence{ExitCode: 1, Legacy: code(codes.ListenerBindFailed)},
			codes.ListenerBindFailed, SourceLegacyOutput},
		{"legacy output at exit 0 fails",
			Evidence{ExitCode: 0, Legacy: code(codes.ServiceStartFailed), Post: healthy},
			codes.ServiceStartFailed, SourceLegacyOutput},
		{"exit 0 and healthy",
			Evidence{ExitCode: 0, Post: healthy},
			codes.OK, SourcePostConditions},
		{"exit 0 without the service file",
			Evidence{ExitCode: 0, Post: PostConditions{Checked: true, StatusRunning: true}},
			codes.ServiceNotRegistered, SourcePostConditions},
		{"exit 0, service file, status not running",
			Evidence{ExitCode: 0, Post: PostConditions{Checked: true, ServiceFile: true}},
			codes.ServiceNotRunning, SourcePostConditions},
		{"exit 0 with unchecked post-conditions is never success",
			Evidence{ExitCode: 0},
			codes.InstallerFailed, SourceInstaller},
		{"non-zero exit with nothing understood",
			Evidence{ExitCode: 1},
			codes.CtrldFailedUnclassified, SourceExitStatus},
		{"killed by a signal we did not send",
			Evidence{ExitCode: -1},
			codes.CtrldFailedUnclassified, SourceExitStatus},
		{"exit 2 (a Go panic)",
			Evidence{ExitCode: 2},
			codes.CtrldFailedUnclassified, SourceExitStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Decide(tc.ev)
			assert.Equal(t, tc.code, o.Code.Name)
			assert.Equal(t, tc.source, o.Source)
		})
	}
}

func TestNeedsPostConditions(t *testing.T) {
	assert.True(t, NeedsPostConditions(Evidence{ExitCode: 0}))
	assert.True(t, NeedsPostConditions(Evidence{ExitCode: 0, ResultFile: resultfile.Finding{Status: resultfile.Stale}}))
	assert.False(t, NeedsPostConditions(Evidence{ExitCode: 1}))
	assert.False(t, NeedsPostConditions(Evidence{ExitCode: 0, Legacy: code(codes.ServiceStartFailed)}))
	assert.False(t, NeedsPostConditions(Evidence{ExitCode: 0, ResultFile: used(codes.APIRejected)}))
	assert.False(t, NeedsPostConditions(Evidence{ExitCode: 0, Installer: code(codes.InstallerFailed)}))
	assert.False(t, NeedsPostConditions(Evidence{ExitCode: 0, TimedOut: true}))
}
