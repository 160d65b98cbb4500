//go:build unix

package install

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
)

const daemonFatal = "Nov 30 14:46:03.826 FTL network is not up yet\n"

// A daemon log someone else could write decides nothing: the user who
// wrote it would choose the outcome.
func TestServiceLogTrust(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		mode os.FileMode
		want outcome.FileState
	}{
		{0o644, outcome.FileUsed},
		{0o666, outcome.FileUntrusted},
		{0o620, outcome.FileUntrusted},
	} {
		p := filepath.Join(dir, "ctrld.log")
		os.Remove(p)
		marks := snapshotLogs(context.Background(), []string{p})
		if err := os.WriteFile(p, []byte(daemonFatal), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, tc.mode); err != nil {
			t.Fatal(err)
		}
		state, code := readLogs(context.Background(), marks)
		if state != tc.want || (state == outcome.FileUsed) != (code != nil) {
			t.Errorf("mode %o: %v %v, want %v", tc.mode, state, code, tc.want)
		}
	}
}

// A log whose read never returns ends with the budget.
func TestServiceLogReadEndsWithTheBudget(t *testing.T) {
	old := serviceLogRules
	serviceLogRules.AnyKind = true // a FIFO reads the way a stalled mount does
	defer func() { serviceLogRules = old }()
	p := filepath.Join(t.TempDir(), "ctrld.log")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(p, os.O_RDWR, 0) // a writer that never writes
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	state, _ := readLogs(ctx, []logMark{{path: p}})
	if state != outcome.FileUntrusted {
		t.Errorf("state %v, want untrusted", state)
	}
	if d := time.Since(began); d > 5*time.Second {
		t.Errorf("the read held the run for %v", d)
	}
}
