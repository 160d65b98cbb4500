package install

import (
	"bytes"

	"github.com/Masterminds/semver/v3"
)

// flagSince is the ctrld release that introduced a flag ctrld-install
// passes; nil when every release has it.
func flagSince(flag string) *semver.Version {
	if flag == FlagToken {
		return semver.MustParse("1.3.0")
	}
	return nil
}

// unknownFlags notices cobra's "unknown flag" error and whether it named a
// flag ctrld-install added. Nothing of the line is kept.
type unknownFlags struct{ found, own bool }

func (u *unknownFlags) line(b []byte) {
	i := bytes.Index(b, []byte("unknown flag: "))
	j := bytes.Index(b, []byte("unknown shorthand flag: "))
	if i < 0 && j < 0 {
		return
	}
	u.found = true
	if i >= 0 {
		name := bytes.TrimSpace(b[i+len("unknown flag: "):])
		if string(name) == FlagToken || string(name) == FlagResolver {
			u.own = true
		}
	}
}
