package codes

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestEveryCodeHasOneInRangeExit(t *testing.T) {
	for _, c := range All() {
		if c.IsOK() {
			if c.Exit != 0 {
				t.Errorf("%s: Exit = %d, want 0", c.Name, c.Exit)
			}
			if c.Class != ClassOK {
				t.Errorf("%s: Class = %q, want %q", c.Name, c.Class, ClassOK)
			}
			continue
		}
		if c.Name == DeactivationPinRequired {
			// ctrld's own exit status for the PIN, kept unchanged for consumers.
			if c.Exit != 126 {
				t.Errorf("%s: Exit = %d, want 126", c.Name, c.Exit)
			}
			if c.Stage != StageService {
				t.Errorf("%s: Stage = %q, want %q", c.Name, c.Stage, StageService)
			}
			continue
		}
		lo, hi := c.Stage.ExitRange()
		if lo == 0 {
			t.Fatalf("%s has no stage range: %q.ExitRange() = %d, %d", c.Name, c.Stage, lo, hi)
		}
		if c.Exit < lo || c.Exit > hi {
			t.Errorf("%s exit %d outside %s %d-%d", c.Name, c.Exit, c.Stage, lo, hi)
		}
	}
}

func TestNoTwoCodesShareAnExit(t *testing.T) {
	seen := map[int]string{}
	for _, c := range All() {
		if other, dup := seen[c.Exit]; dup {
			t.Errorf("%s and %s share exit %d", c.Name, other, c.Exit)
		}
		seen[c.Exit] = c.Name
	}
}

func TestNoCollisionWithReservedExits(t *testing.T) {
	for _, c := range All() {
		if c.IsOK() {
			continue
		}
		if c.Exit <= 3 {
			t.Errorf("%s uses exit %d, reserved for success and ctrld status", c.Name, c.Exit)
		}
		if c.Exit == 126 && c.Name != DeactivationPinRequired {
			t.Errorf("%s uses 126, reserved for the deactivation PIN", c.Name)
		}
	}
}

func TestEachStageHasItsCatchAllFirst(t *testing.T) {
	for _, s := range Stages {
		lo, _ := s.ExitRange()
		c, ok := ByExit(lo)
		if !ok {
			t.Fatalf("stage %s has no catch-all at %d: ByExit(%d) found nothing", s, lo, lo)
		}
		if c.Stage != s {
			t.Errorf("ByExit(%d).Stage = %q, want %q", lo, c.Stage, s)
		}
		if !strings.HasSuffix(c.Name, "_FAILED") {
			t.Errorf("catch-all %s of stage %s does not end with _FAILED", c.Name, s)
		}
	}
}

var (
	nameRE  = regexp.MustCompile(`^[A-Z][A-Z_]*[A-Z]$`)
	stageRE = regexp.MustCompile(`^[a-z]*$`)
)

// Every surface is built from registry text, so the text must fit the line
// grammar and read as one sentence each.
func TestRegistryTextIsWellFormed(t *testing.T) {
	for _, c := range All() {
		if !nameRE.MatchString(c.Name) {
			t.Errorf("name %q does not match %s", c.Name, nameRE)
		}
		if !stageRE.MatchString(string(c.Stage)) {
			t.Errorf("%s: stage %q does not match %s", c.Name, c.Stage, stageRE)
		}
		if classes := []Class{ClassOK, ClassFatal, ClassRetryable, ClassAlreadyManaged}; !slices.Contains(classes, c.Class) {
			t.Errorf("%s: class %q is not one of %q", c.Name, c.Class, classes)
		}
		for field, s := range map[string]string{"scenario": c.Scenario, "next step": c.NextStep, "evidence": c.Evidence} {
			if s == "" {
				t.Errorf("%s %s is empty", c.Name, field)
			}
			if !strings.HasSuffix(s, ".") {
				t.Errorf("%s %s should end with a period: %q", c.Name, field, s)
			}
			if strings.Contains(s, "\n") {
				t.Errorf("%s %s contains a newline: %q", c.Name, field, s)
			}
		}
		if c.Since == "" {
			t.Errorf("%s: Since is empty", c.Name)
		}
	}
}

func TestLookup(t *testing.T) {
	c, ok := LookupFold(" listener_bind_failed ")
	if !ok {
		t.Fatalf("LookupFold(%q) found nothing", " listener_bind_failed ")
	}
	if c.Exit != 41 {
		t.Errorf("LookupFold(%q).Exit = %d, want 41", " listener_bind_failed ", c.Exit)
	}
	if _, ok = Lookup("listener_bind_failed"); ok {
		t.Errorf("Lookup(%q) found a code: Lookup is case-sensitive", "listener_bind_failed")
	}
	c, ok = ByExit(64)
	if !ok {
		t.Fatalf("ByExit(64) found nothing")
	}
	if c.Name != CtrldTimeout {
		t.Errorf("ByExit(64).Name = %q, want %q", c.Name, CtrldTimeout)
	}
	if _, ok = Agrees("listener", ListenerBindFailed, 41); !ok {
		t.Errorf("Agrees(listener, %s, 41) = false, want true", ListenerBindFailed)
	}
	if _, ok = Agrees("bootstrap", ListenerBindFailed, 41); ok {
		t.Errorf("Agrees(bootstrap, %s, 41) = true, want false", ListenerBindFailed)
	}
	if _, ok = Agrees("listener", ListenerBindFailed, 40); ok {
		t.Errorf("Agrees(listener, %s, 40) = true, want false", ListenerBindFailed)
	}
	if !panics(func() { Must("NOPE") }) {
		t.Errorf("Must(%q) did not panic", "NOPE")
	}
}

// panics reports whether f panics.
func panics(f func()) (panicked bool) {
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	f()
	return false
}

// Codes are append-only: every code in the committed snapshot must still be
// registered with the same stage and exit status. New codes are added to the
// snapshot by hand, which is the review point for a registry change.
func TestRegistryIsAppendOnly(t *testing.T) {
	f, err := os.Open("testdata/registry-snapshot.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 3 {
			t.Fatalf("snapshot line %q has %d fields, want 3", line, len(fields))
		}
		exit, err := strconv.Atoi(fields[2])
		if err != nil {
			t.Fatalf("snapshot line %q: %v", line, err)
		}
		stage := fields[1]
		if stage == "-" {
			stage = ""
		}
		c, ok := Lookup(fields[0])
		if !ok {
			t.Errorf("%s was removed or renamed; codes are append-only (mark it Deprecated instead)", fields[0])
			continue
		}
		if got := string(c.Stage); got != stage {
			t.Errorf("%s changed stage: registry has %q, snapshot has %q", c.Name, got, stage)
		}
		if c.Exit != exit {
			t.Errorf("%s was renumbered: registry has exit %d, snapshot has %d", c.Name, c.Exit, exit)
		}
		n++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if got, want := len(All()), n; got != want {
		t.Errorf("registry has %d codes, snapshot has %d: a code was added to the registry but not to testdata/registry-snapshot.txt", got, want)
	}
}
