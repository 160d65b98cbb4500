package parse

import "testing"

func TestParseUnitState(t *testing.T) {
	for _, tc := range []struct {
		out     string
		want    UnitState
		ok      bool
		running bool
	}{
		{"ActiveState=active\nSubState=running\n", UnitState{"active", "running"}, true, true},
		// ctrld-1.5.0-systemd-systemctl-status-killed.txt, systemd-252-auto-restart.txt
		{"ActiveState=activating\nSubState=auto-restart\n", UnitState{"activating", "auto-restart"}, true, false},
		{"ActiveState=failed\nSubState=failed\n", UnitState{"failed", "failed"}, true, false},
		{"ActiveState=inactive\nSubState=dead\n", UnitState{"inactive", "dead"}, true, false},
		{"ActiveState=active\n", UnitState{Active: "active"}, false, false},
		{"ActiveState=Active; rm -rf\nSubState=running\n", UnitState{Sub: "running"}, false, false},
		{"", UnitState{}, false, false},
	} {
		u, ok := ParseUnitState([]byte(tc.out))
		if u != tc.want || ok != tc.ok || u.Running() != tc.running {
			t.Errorf("%q: %+v %v running=%v, want %+v %v %v", tc.out, u, ok, u.Running(), tc.want, tc.ok, tc.running)
		}
	}
}
