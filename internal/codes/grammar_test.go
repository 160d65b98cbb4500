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
		in := "Nov 29 mac postinstall: ctrld-install: " + FailureLine(VerbProvisioning, c) + " tail"
		tr, _, end, ok := FindTriple([]byte(in))
		if !ok {
			t.Errorf("FindTriple(%q) found nothing", in)
			continue
		}
		if got, ok := tr.Code(); !ok || got.Name != c.Name {
			t.Errorf("FindTriple(%q).Code() = %s, %v; want %s", in, got.Name, ok, c.Name)
		}
		if rest := in[end:]; rest != " tail" {
			t.Errorf("FindTriple(%q) rest = %q, want %q", in, rest, " tail")
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
			_, _, _, ok = FindTriple([]byte(s))
		}
		if ok {
			t.Errorf("%q parsed as an identifier, want it rejected", s)
		}
	}
}

// The grammar alone, without the registry: explain reports a triple that
// disagrees rather than ignoring it, and reads on to the next one.
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
	// The search goes on after a triple that disagrees, to the one that agrees.
	next, s2, _, ok := FindTriple([]byte(in[end:]))
	if c, agrees := next.Code(); !ok || !agrees || c.Name != ListenerBindFailed || !strings.HasPrefix(in[end+s2:], "stage=listener") {
		t.Errorf("FindTriple after the first triple = %s, %v; want the second, agreeing triple", next.Name, ok)
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

func TestExitRangesComeFromTheStages(t *testing.T) {
	if got, want := ExitRanges(), "30-39 bootstrap, 40-49 listener, 50-59 service, 60-69 installer"; got != want {
		t.Errorf("ExitRanges() = %q, want %q", got, want)
	}
}
