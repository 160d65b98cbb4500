//go:build !linux

package install

// background and hurry lower and restore a thread's priority on Linux
// only; elsewhere the work runs at the run's own priority.
func background() int { return 0 }

func hurry(int) {}
