package parse

import (
	"bufio"
	"bytes"
	"strings"
)

// UnitState is what `systemctl show -p ActiveState -p SubState UNIT`
// says of a unit.
type UnitState struct {
	Active string // active, activating, deactivating, inactive, failed, ...
	Sub    string // running, auto-restart, dead, failed, ...
}

// Running reports whether systemd runs the unit's process now. A unit
// waiting out its RestartSec is "activating (auto-restart)": nothing runs,
// whatever ctrld status says (ctrld-1.5.0-systemd-status-killed.txt).
func (u UnitState) Running() bool { return u.Active == "active" && u.Sub == "running" }

// ParseUnitState reads systemctl show's KEY=VALUE lines; ok is false when
// either value is missing. Only the two words are kept, each checked to be
// one of systemd's lower-case words: nothing else of the output is.
func ParseUnitState(out []byte) (u UnitState, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, found := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !found || !unitWord(v) {
			continue
		}
		switch k {
		case "ActiveState":
			u.Active = v
		case "SubState":
			u.Sub = v
		}
	}
	return u, u.Active != "" && u.Sub != ""
}

func unitWord(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && c != '-' {
			return false
		}
	}
	return true
}
