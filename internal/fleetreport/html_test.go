package fleetreport

import (
	"regexp"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

// Each code's share of the devices listed: all 800 among a few codes, at
// most 200 a code, at least 10.
func TestListedPerCode(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]int{0: 200, 1: 200, 4: 200, 8: 100, 32: 25, 100: 10} {
		if got := ListedPerCode(n); got != want {
			t.Errorf("ListedPerCode(%d) = %d, want %d", n, got, want)
		}
	}
}

// Codes never wrap: a table column takes the width of its longest code.
// (The Chromium test reads the printed PDF's text for cut codes.)
func TestCodesDoNotWrap(t *testing.T) {
	t.Parallel()
	if got, want := codeHTML(codes.ListenerConfiguredAddrUnavailable), "<code>LISTENER_CONFIGURED_ADDR_UNAVAILABLE</code>"; got != want {
		t.Errorf("codeHTML = %q, want %q", got, want)
	}
	if !regexp.MustCompile(`(?m)^code \{[^}]*white-space: nowrap;`).MatchString(pageStyle) {
		t.Errorf("the page's style lets a code wrap")
	}
}
