package codes

import (
	"strings"
	"testing"
)

func TestIdentifierRoundTrip(t *testing.T) {
	for _, c := range All() {
		if c.IsOK() {
			continue // success has no failure line
		}
		line := FailureLine(VerbProvisioning, c)
		in := "Nov 29 mac postinstall: ctrld-install: " + line + " tail"
		got, start, rest, ok := FindIdentifier([]byte(in))
		if !ok {
			t.Errorf("FindIdentifier(%q) found nothing", in)
			continue
		}
		if got.Name != c.Name {
			t.Errorf("FindIdentifier(%q) = %s, want %s", in, got.Name, c.Name)
		}
		if string(rest) != " tail" {
			t.Errorf("FindIdentifier(%q) rest = %q, want %q", in, rest, " tail")
		}
		verbLine := "ctrld-install: " + line
		verbStart := start - len("Nov 29 mac postinstall: ")
		if got, want := FailureVerb([]byte(verbLine), verbStart), VerbProvisioning; got != want {
			t.Errorf("FailureVerb(%q, %d) = %q, want %q", verbLine, verbStart, got, want)
		}
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
		if ok {
			t.Errorf("%q parsed as an identifier, want it rejected", s)
		}
	}
}

// The grammar alone, without the registry: explain reports a triple that
// disagrees rather than ignoring it, and finds the identifier after one.
func TestFindTriple(t *testing.T) {
	in := "a stage=bootstrap code=LISTENER_BIND_FAILED (exit 41) then stage=listener code=LISTENER_BIND_FAILED (exit 41)."
	tr, start, end, ok := FindTriple([]byte(in))
	if !ok {
		t.Fatalf("FindTriple(%q) found nothing", in)
	}
	if got := in[start:end]; got != "stage=bootstrap code=LISTENER_BIND_FAILED (exit 41)" {
		t.Errorf("FindTriple(%q) = %q, want the first triple", in, got)
	}
	if string(tr.Stage) != "bootstrap" || string(tr.Name) != "LISTENER_BIND_FAILED" || tr.Exit != 41 {
		t.Errorf("FindTriple(%q) = %s %s %d, want bootstrap LISTENER_BIND_FAILED 41", in, tr.Stage, tr.Name, tr.Exit)
	}
	if _, ok := tr.Code(); ok {
		t.Errorf("Triple{bootstrap, LISTENER_BIND_FAILED, 41}.Code() agrees, want it refused: the stage is listener")
	}
	c, at, rest, ok := FindIdentifier([]byte(in))
	if !ok || c.Name != ListenerBindFailed || in[at:at+len("stage=listener")] != "stage=listener" || string(rest) != "." {
		t.Errorf("FindIdentifier(%q) = %s at %d, rest %q, %v; want the second triple", in, c.Name, at, rest, ok)
	}
	// A "stage=" that does not parse does not end the search.
	after := "stage=Listener stage=x code=Y, then stage=listener code=LISTENER_BIND_FAILED (exit 41)"
	if tr, start, _, ok := FindTriple([]byte(after)); !ok || string(tr.Name) != ListenerBindFailed || start != strings.LastIndex(after, "stage=") {
		t.Errorf("FindTriple(%q) = %s at %d, %v; want the last triple", after, tr.Name, start, ok)
	}
	for _, s := range []string{"stage=Listener code=LISTENER_BIND_FAILED (exit 41)", "stage=listener code=listener_bind_failed (exit 41)",
		"stage=listener code=LISTENER_BIND_FAILED (exit 1000)", "xstage=listener code=LISTENER_BIND_FAILED (exit 41)"} {
		if _, _, _, ok := FindTriple([]byte(s)); ok {
			t.Errorf("FindTriple(%q) found a triple, want none", s)
		}
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
		if !ok {
			t.Errorf("FindIdentifier(%q) found nothing", line)
		}
		if got := FailureVerb([]byte(line), start); got != want {
			t.Errorf("FailureVerb(%q, %d) = %q, want %q", line, start, got, want)
		}
	}
}

func TestExitRangesComeFromTheStages(t *testing.T) {
	if got, want := ExitRanges(), "30-39 bootstrap, 40-49 listener, 50-59 service, 60-69 installer"; got != want {
		t.Errorf("ExitRanges() = %q, want %q", got, want)
	}
}
