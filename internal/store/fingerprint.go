package store

import (
	"encoding/json"
	"io"
	"path/filepath"
	"runtime"

	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
)

// The fingerprint says what the service was last provisioned with: a
// token, by its keyed hash, or a resolver ID. The token is exchanged for a
// resolver by the API, so the service definition names the resolver, never
// the token: without this a new token could not be told from the old one.

// Kinds of what the service was provisioned with.
const (
	kindToken    = "token"
	kindResolver = "resolver"
)

// fingerprintFile keeps the token's keyedHash in the fields it has had
// since the first release, so that devices keep what they were given.
type fingerprintFile struct {
	Version    int    `json:"version"`
	Kind       string `json:"kind"`
	Salt       []byte `json:"salt,omitempty"`
	Iterations int    `json:"iterations,omitempty"`
	Token      []byte `json:"token,omitempty"`
}

func (fp fingerprintFile) hash() *KeyedHash {
	return &KeyedHash{Salt: fp.Salt, Iterations: fp.Iterations, Hash: fp.Token}
}

func readFingerprint(home string) (fingerprintFile, bool) {
	f, fi, err := safefile.Open(FingerprintPath(home), Private)
	if err != nil {
		return fingerprintFile{}, false
	}
	defer f.Close()
	// Readable by others is not what this program writes. Windows makes
	// mode bits up; the file's own ACL protects it there.
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return fingerprintFile{}, false
	}
	var fp fingerprintFile
	if json.NewDecoder(io.LimitReader(f, 4<<10)).Decode(&fp) != nil || fp.Version != 1 {
		return fingerprintFile{}, false
	}
	if fp.Kind != kindResolver && (fp.Kind != kindToken || !fp.hash().Valid()) {
		return fingerprintFile{}, false
	}
	return fp, true
}

// FingerprintPath is where the fingerprint is.
func FingerprintPath(home string) string { return filepath.Join(home, Fingerprint) }

// TokenSame compares token with what the service was provisioned with: a
// service provisioned by resolver ID was not provisioned with this token.
func TokenSame(home, token string) parse.Same {
	fp, ok := readFingerprint(home)
	switch {
	case !ok:
		return parse.SameUnknown
	case fp.Kind == kindResolver:
		return parse.SameNo
	case fp.hash().Matches(token):
		return parse.SameYes
	}
	return parse.SameNo
}

func tokenFingerprint(token string) (fingerprintFile, error) {
	h, err := NewKeyedHash(token)
	if err != nil {
		return fingerprintFile{}, err
	}
	return fingerprintFile{Version: 1, Kind: kindToken, Salt: h.Salt, Iterations: h.Iterations, Token: h.Hash}, nil
}

// RememberToken keeps the fingerprint of the token a provisioning just
// succeeded with.
func RememberToken(home, token string) error {
	fp, err := tokenFingerprint(token)
	if err != nil {
		return err
	}
	return Write(home, Fingerprint, fp)
}

// RememberResolver keeps that a provisioning succeeded by resolver ID: a
// token afterwards is a change.
func RememberResolver(home string) error {
	return Write(home, Fingerprint, fingerprintFile{Version: 1, Kind: kindResolver})
}

// ForgetToken removes the fingerprint: the next run cannot tell the token,
// which plans no change.
func ForgetToken(home string) error { return Remove(home, Fingerprint) }
