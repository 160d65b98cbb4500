package codes

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIdentifierRoundTrip(t *testing.T) {
	for _, c := range All() {
		if c.IsOK() {
			continue // success has no failure line
		}
		line := FailureLine(VerbProvisioning, c)
		got, start, rest, ok := FindIdentifier([]byte("Nov 29 mac postinstall: ctrld-install: " + line + " tail"))
		if !assert.True(t, ok, c.Name) {
			continue
		}
		assert.Equal(t, c.Name, got.Name)
		assert.Equal(t, " tail", string(rest))
		assert.Equal(t, VerbProvisioning, FailureVerb([]byte("ctrld-install: "+line), start-len("Nov 29 mac postinstall: ")))
	}
}

func TestParseIdentifierRejects(t *testing.T) {
	for _, s := range []string{
		"stage=listener code=LISTENER_BIND_FAILED (exit 40)",  // exit disagrees
		"stage=bootstrap code=LISTENER_BIND_FAILED (exit 41)", // stage disagrees
		"stage=listener code=LISTENER_BIND_FAILED (exit 041)", // leading zero
		"stage=listener code=LISTENER_BIND_FAILED (exit +41)",
		"stage=listener code=LISTENER_BIND_FAILED (exit 41",
		"stage=listener code=NOPE (exit 41)",
		"stage= code=OK (exit 0)x",
		"xstage=listener code=LISTENER_BIND_FAILED (exit 41)",
	} {
		_, _, ok := ParseIdentifier([]byte(s))
		if s[0] == 'x' {
			_, _, _, ok = FindIdentifier([]byte(s))
		}
		assert.False(t, ok, s)
	}
}

func TestFailureVerb(t *testing.T) {
	for line, want := range map[string]string{
		"ctrld-install: uninstall failed: " + Identifier(Must(ServiceUninstallFailed)):  VerbUninstall,
		"ctrld-install: verify failed: " + Identifier(Must(ServiceNotRunning)):          VerbVerify,
		"ctrld-install: attempt 1 failed: " + Identifier(Must(APIUnreachable)):          "",
		"ctrld-install: provisioning failed: " + Identifier(Must(ListenerBindFailed)):   VerbProvisioning,
		"ctrld-install: reprovisioning failed: " + Identifier(Must(ListenerBindFailed)): "",
	} {
		_, start, _, ok := FindIdentifier([]byte(line))
		assert.True(t, ok, line)
		assert.Equal(t, want, FailureVerb([]byte(line), start), line)
	}
}

func TestExitRangesComeFromTheStages(t *testing.T) {
	assert.Equal(t, "30-39 bootstrap, 40-49 listener, 50-59 service, 60-69 installer", ExitRanges())
}
