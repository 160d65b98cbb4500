package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

func openLogFor(t *testing.T, path string) (string, func()) {
	t.Helper()
	var errBuf bytes.Buffer
	p := New(new(bytes.Buffer), &errBuf, nil, false)
	closeLog := p.OpenLog(path, "run started")
	return errBuf.String(), closeLog
}

// Root appends to --log; a hard link a user made to root's file would have
// root append to that file.
func TestLogRefusesAHardLink(t *testing.T) {
	dir := wine.TempDir(t)
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("root's file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "install.log")
	if err := os.Link(target, log); err != nil {
		t.Fatal(err)
	}
	stderr, closeLog := openLogFor(t, log)
	closeLog()
	if !strings.Contains(stderr, "cannot open the log file") {
		t.Fatalf("stderr %q, want the log refused", stderr)
	}
	if b, _ := os.ReadFile(target); string(b) != "root's file\n" {
		t.Fatalf("the linked file was written: %q", b)
	}
}

func TestLogRefusesASymlink(t *testing.T) {
	wine.Skip(t, wine.NoSymlinks)
	dir := wine.TempDir(t)
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "install.log")
	if err := os.Symlink(target, log); err != nil {
		t.Skip("no symlinks here:", err)
	}
	stderr, closeLog := openLogFor(t, log)
	closeLog()
	if !strings.Contains(stderr, "cannot open the log file") {
		t.Fatalf("stderr %q, want the log refused", stderr)
	}
	if fi, _ := os.Stat(target); fi.Size() != 0 {
		t.Fatal("the link's target was written")
	}
}

func big(t *testing.T, path, fill string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Repeat(fill+"\n", MaxLog/len(fill)+1)), 0o640); err != nil {
		t.Fatal(err)
	}
}

// Runs that start together on one log rotate it once: the history the first
// moved to .1 is never rotated over by the second.
func TestLogRotatesOnceUnderConcurrentRuns(t *testing.T) {
	for try := range 20 {
		dir := wine.TempDir(t)
		log := filepath.Join(dir, "install.log")
		big(t, log, "history")
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, closeLog := openLogFor(t, log)
				closeLog()
			}()
		}
		wg.Wait()
		old, err := os.ReadFile(log + ".1")
		if err != nil || !strings.HasPrefix(string(old), "history\n") {
			t.Fatalf("try %d: %s.1 lost the history (%d bytes, %v)", try, "install.log", len(old), err)
		}
		cur, _ := os.ReadFile(log)
		if n := strings.Count(string(cur), "run started"); n != 4 {
			t.Fatalf("try %d: the new log holds %d run headers, want 4:\n%s", try, n, cur)
		}
	}
}

// A .1 that is a directory cannot take the log: the log starts again rather
// than growing without bound, and says so.
func TestLogRestartsWhenItCannotRotate(t *testing.T) {
	dir := wine.TempDir(t)
	log := filepath.Join(dir, "install.log")
	big(t, log, "history")
	if err := os.Mkdir(log+".1", 0o755); err != nil {
		t.Fatal(err)
	}
	var errBuf bytes.Buffer
	p := New(new(bytes.Buffer), &errBuf, nil, false)
	closeLog := p.OpenLog(log, "run started")
	closeLog()
	fi, err := os.Stat(log)
	if err != nil || fi.Size() > 4096 {
		t.Fatalf("the log was not started again: %v, %d bytes", err, fi.Size())
	}
	b, _ := os.ReadFile(log)
	if !strings.Contains(errBuf.String(), "could not be rotated") || !strings.Contains(string(b), "could not be rotated") {
		t.Fatalf("the restart was not reported: stderr %q, log %q", errBuf.String(), b)
	}
}
