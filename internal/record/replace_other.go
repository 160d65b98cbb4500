//go:build !windows

package record

import "os"

// replaceFile is rename(2), which replaces a file others hold open.
func replaceFile(from, to string) error { return os.Rename(from, to) }
