package bench

import (
	"encoding/json"
	"os"
)

// FakeScript tells the bench's fake ctrld (cmd/fakectrld) what to do. It
// mirrors that command's Script type, which is in a main package.
type FakeScript struct {
	Version string     `json:"version"`
	Start   FakeAction `json:"start"`
	Status  FakeAction `json:"status"`
}

// FakeAction is one command's behaviour; cmd/fakectrld documents the fields.
type FakeAction struct {
	ServiceFile string   `json:"service_file,omitempty"`
	NeedService string   `json:"need_service,omitempty"`
	Stdout      []string `json:"stdout,omitempty"`
	CatFile     string   `json:"cat_file,omitempty"`
	FloodBytes  int64    `json:"flood_bytes,omitempty"`
	IgnoreTerm  bool     `json:"ignore_term,omitempty"`
	Hang        bool     `json:"hang,omitempty"`
	StampFile   string   `json:"stamp_file,omitempty"`
	Exit        int      `json:"exit"`
}

// SetFakeScript writes the sidecar the fake at path reads.
func SetFakeScript(path string, s FakeScript) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return os.WriteFile(path+".bench.json", b, 0o644)
}
