package install

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// The fingerprint's thread runs at the lowest priority, and gets its normal
// priority back once the run waits for it.
func TestBackgroundThreadPriority(t *testing.T) {
	nice := func(tid int) int {
		// getpriority returns 20 - nice for a thread.
		p, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
		if err != nil {
			t.Fatalf("getpriority: %v", err)
		}
		return 20 - p
	}
	tids := make(chan int)
	release := make(chan struct{})
	go func() {
		tids <- background()
		<-release
	}()
	tid := <-tids
	defer close(release)
	if tid == unix.Gettid() {
		t.Fatal("background lowered the test's own thread")
	}
	if got := nice(tid); got != 19 {
		t.Errorf("the background thread's nice value is %d, want 19", got)
	}
	if os.Geteuid() != 0 {
		t.Skip("only root may raise a thread's priority back")
	}
	hurry(tid)
	if got := nice(tid); got != 0 {
		t.Errorf("after hurry, the thread's nice value is %d, want 0", got)
	}
}
