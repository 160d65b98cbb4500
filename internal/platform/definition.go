package platform

import (
	"path/filepath"

	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
)

// ServiceDefinition reads the daemon's command line from the service
// definition: the file ctrld wrote, or on Windows without one, the service
// control manager's image path. A definition someone other than root (or
// this user) could have written says nothing: false.
func ServiceDefinition(serviceFile string) (parse.Definition, bool) {
	if serviceFile == "" {
		return serviceManagerDefinition()
	}
	f, _, err := safefile.Open(serviceFile, safefile.Rules{Owner: safefile.Self(), Private: true})
	if err != nil {
		return parse.Definition{}, false
	}
	defer f.Close()
	d, err := parse.ServiceDefinition(f, filepath.Base(serviceFile))
	return d, err == nil
}
