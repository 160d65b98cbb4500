package bench

import "github.com/Control-D-Inc/ctrld-install/internal/standin"

// FakeScript tells the bench's stand-in ctrld (cmd/fakectrld) what to do.
type FakeScript = standin.Script

// FakeAction is one command's behaviour.
type FakeAction = standin.Action

// SetFakeScript writes the sidecar the stand-in at path reads.
func SetFakeScript(path string, s FakeScript) error { return standin.SetScript(path, s) }

// Installed is the content a stand-in's start writes to the service file.
func Installed(serviceFile string) map[string]string {
	return map[string]string{serviceFile: "[Unit]\n"}
}
