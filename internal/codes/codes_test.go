package codes

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEveryCodeHasOneInRangeExit(t *testing.T) {
	for _, c := range All() {
		if c.IsOK() {
			assert.Equal(t, 0, c.Exit)
			assert.Equal(t, ClassOK, c.Class)
			continue
		}
		if c.Name == DeactivationPinRequired {
			// ctrld's own exit status for the PIN, kept unchanged for consumers.
			assert.Equal(t, 126, c.Exit)
			assert.Equal(t, StageService, c.Stage)
			continue
		}
		lo, hi := c.Stage.ExitRange()
		require.NotZero(t, lo, "%s has no stage range", c.Name)
		assert.True(t, c.Exit >= lo && c.Exit <= hi, "%s exit %d outside %s %d-%d", c.Name, c.Exit, c.Stage, lo, hi)
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
		require.True(t, ok, "stage %s has no catch-all at %d", s, lo)
		assert.Equal(t, s, c.Stage)
		assert.True(t, strings.HasSuffix(c.Name, "_FAILED"), "catch-all %s", c.Name)
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
		assert.Regexp(t, nameRE, c.Name)
		assert.Regexp(t, stageRE, string(c.Stage))
		assert.Contains(t, []Class{ClassOK, ClassFatal, ClassRetryable, ClassAlreadyManaged}, c.Class, c.Name)
		for field, s := range map[string]string{"scenario": c.Scenario, "next step": c.NextStep, "evidence": c.Evidence} {
			assert.NotEmpty(t, s, "%s %s", c.Name, field)
			assert.True(t, strings.HasSuffix(s, "."), "%s %s should end with a period", c.Name, field)
			assert.NotContains(t, s, "\n", "%s %s", c.Name, field)
		}
		assert.NotEmpty(t, c.Since, c.Name)
	}
}

func TestLookup(t *testing.T) {
	c, ok := LookupFold(" listener_bind_failed ")
	require.True(t, ok)
	assert.Equal(t, 41, c.Exit)
	_, ok = Lookup("listener_bind_failed")
	assert.False(t, ok, "Lookup is case-sensitive")
	c, ok = ByExit(64)
	require.True(t, ok)
	assert.Equal(t, CtrldTimeout, c.Name)
	_, ok = Agrees("listener", ListenerBindFailed, 41)
	assert.True(t, ok)
	_, ok = Agrees("bootstrap", ListenerBindFailed, 41)
	assert.False(t, ok)
	_, ok = Agrees("listener", ListenerBindFailed, 40)
	assert.False(t, ok)
	assert.Panics(t, func() { Must("NOPE") })
}

// Codes are append-only: every code in the committed snapshot must still be
// registered with the same stage and exit status. New codes are added to the
// snapshot by hand, which is the review point for a registry change.
func TestRegistryIsAppendOnly(t *testing.T) {
	f, err := os.Open("testdata/registry-snapshot.txt")
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		require.Len(t, fields, 3, "snapshot line %q", line)
		exit, err := strconv.Atoi(fields[2])
		require.NoError(t, err)
		stage := fields[1]
		if stage == "-" {
			stage = ""
		}
		c, ok := Lookup(fields[0])
		if !assert.True(t, ok, "%s was removed or renamed; codes are append-only (mark it Deprecated instead)", fields[0]) {
			continue
		}
		assert.Equal(t, stage, string(c.Stage), "%s changed stage", c.Name)
		assert.Equal(t, exit, c.Exit, "%s was renumbered", c.Name)
		n++
	}
	require.NoError(t, sc.Err())
	assert.Equal(t, len(All()), n, "a code was added to the registry but not to testdata/registry-snapshot.txt")
}
