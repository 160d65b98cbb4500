//go:build !unix

package main

import (
	"fmt"
	"os"
)

// The figures rely on process groups, wait4's resource usage and a fake
// ctrld driven through POSIX signals; they are taken on Linux or macOS.
func main() {
	fmt.Fprintln(os.Stderr, "ctrld-bench: error: the benchmarks run on Linux or macOS only")
	os.Exit(1)
}
