//go:build unix && !linux

package runner

func closeRangeOnExec() bool { return false }
