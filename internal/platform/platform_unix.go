//go:build unix

package platform

import "os"

// Privileged reports whether the process runs as root.
func Privileged() (bool, error) { return os.Geteuid() == 0, nil }

// ServiceRegistered reports whether the service definition exists and is a
// regular file. ctrld writes a plain file; a symlink or directory there was
// put by someone else.
func ServiceRegistered(serviceFile string) bool {
	return serviceFile != "" && regularFile(serviceFile)
}
