//go:build unix

package platform

import (
	"os"
	"path/filepath"

	"github.com/Control-D-Inc/ctrld-install/internal/parse"
)

// Privileged reports whether the process runs as root.
func Privileged() (bool, error) { return os.Geteuid() == 0, nil }

// ServiceRegistered reports whether the service definition exists and is a
// regular file. ctrld writes a plain file; a symlink or directory there was
// put by someone else.
func ServiceRegistered(serviceFile string) bool {
	return serviceFile != "" && regularFile(serviceFile)
}

// Unix services are files; there is no service manager to ask.
func serviceManagerDefinition() (parse.Definition, bool) { return parse.Definition{}, false }

func samePath(a, b string) bool { return filepath.Clean(a) == filepath.Clean(b) }
