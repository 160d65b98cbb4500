package install

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

func (fp fingerprintFile) hash() *keyedHash {
	return &keyedHash{Salt: fp.Salt, Iterations: fp.Iterations, Hash: fp.Token}
}

func readFingerprint(home string) (fingerprintFile, bool) {
	f, fi, err := safefile.Open(fingerprintPath(home), private)
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
	if fp.Kind != kindResolver && (fp.Kind != kindToken || !fp.hash().valid()) {
		return fingerprintFile{}, false
	}
	return fp, true
}

func fingerprintPath(home string) string { return filepath.Join(home, fingerprintName) }

// tokenSame compares token with what the service was provisioned with: a
// service provisioned by resolver ID was not provisioned with this token.
func tokenSame(home, token string) parse.Same {
	fp, ok := readFingerprint(home)
	switch {
	case !ok:
		return parse.SameUnknown
	case fp.Kind == kindResolver:
		return parse.SameNo
	case fp.hash().matches(token):
		return parse.SameYes
	}
	return parse.SameNo
}

// tokenPrint is the comparison of a run's token with the kept
// fingerprint, made once when the token is read.
type tokenPrint struct{ same parse.Same }

func startTokenPrint(home, token string) *tokenPrint {
	return &tokenPrint{same: tokenSame(home, token)}
}

// result is the comparison. A nil *tokenPrint (no token) compares nothing.
func (t *tokenPrint) result() parse.Same {
	if t == nil {
		return parse.SameUnknown
	}
	return t.same
}

func tokenFingerprint(token string) (fingerprintFile, error) {
	h, err := newKeyedHash(token)
	if err != nil {
		return fingerprintFile{}, err
	}
	return fingerprintFile{Version: 1, Kind: kindToken, Salt: h.Salt, Iterations: h.Iterations, Token: h.Hash}, nil
}

// remember keeps what a provisioning just succeeded with: fp, a token's
// fingerprint, or a resolver ID's kind.
func remember(home string, fp fingerprintFile) error {
	return writePrivate(home, fingerprintName, writeJSON(fp), 0o600)
}

func forget(home string) error { return removePrivate(home, fingerprintName) }
