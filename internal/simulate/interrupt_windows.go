package simulate

import "os"

// Windows cannot deliver SIGTERM; kill the parent's console group member
// the closest way there is: the parent is ctrld-install, which then ends.
func interruptParent() {
	if p, err := os.FindProcess(os.Getppid()); err == nil {
		_ = p.Signal(os.Interrupt)
	}
}
