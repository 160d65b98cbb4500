package install

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
)

// fingerprintName is the file in the home that says what the service was
// last provisioned with: a token, by a salted, slow fingerprint of it, or a
// resolver ID. The token is exchanged for a resolver by the API, so the
// service definition names the resolver, never the token: without this a
// new token could not be told from the old one. Only root can read the
// file (0600; SYSTEM and Administrators on Windows), and it never holds the
// token nor a fast hash of it: PBKDF2-HMAC-SHA256 with a random salt of its
// own, so a copy of the file (a backup, a disk image) makes each guess
// cost fingerprintIterations hashes, and precomputed tables and the
// linking of devices provisioned with one token are of no use.
const fingerprintName = ".ctrld-install.fingerprint"

// fingerprintIterations: about 2 ms on the machines this runs on, paid
// once by every run given a token, and once more when it is not the token
// kept.
const fingerprintIterations = 10000

// Kinds of what the service was provisioned with.
const (
	kindToken    = "token"
	kindResolver = "resolver"
)

type fingerprintFile struct {
	Version    int    `json:"version"`
	Kind       string `json:"kind"`
	Salt       []byte `json:"salt,omitempty"` // random, 32 bytes
	Iterations int    `json:"iterations,omitempty"`
	Token      []byte `json:"token,omitempty"` // PBKDF2-HMAC-SHA256(token, salt, iterations)
}

func fingerprintPath(home string) string { return filepath.Join(home, fingerprintName) }

func derive(token string, salt []byte, iterations int) []byte {
	k, err := pbkdf2.Key(sha256.New, token, salt, iterations, sha256.Size)
	if err != nil {
		return nil
	}
	return k
}

func readFingerprint(home string) (fingerprintFile, bool) {
	f, fi, err := safefile.Open(fingerprintPath(home), safefile.Rules{Owner: safefile.Self(), Private: true})
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
	if err := json.NewDecoder(io.LimitReader(f, 4<<10)).Decode(&fp); err != nil || fp.Version != 1 {
		return fingerprintFile{}, false
	}
	switch {
	case fp.Kind == kindResolver:
	case fp.Kind == kindToken && len(fp.Salt) == 32 && fp.Iterations >= fingerprintIterations && fp.Iterations <= 100*fingerprintIterations && len(fp.Token) == sha256.Size:
	default:
		return fingerprintFile{}, false
	}
	return fp, true
}

// tokenSame compares token with what the service was provisioned with: a
// service provisioned by resolver ID was not provisioned with this token.
func tokenSame(home, token string) parse.Same {
	fp, ok := readFingerprint(home)
	switch {
	case !ok:
		return parse.SameUnknown
	case fp.Kind == kindResolver:
		return parse.SameNo
	case hmac.Equal(fp.Token, derive(token, fp.Salt, fp.Iterations)):
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
	salt := make([]byte, 32)
	if _, err := rand.Read(salt); err != nil {
		return fingerprintFile{}, err
	}
	return fingerprintFile{Version: 1, Kind: kindToken, Salt: salt, Iterations: fingerprintIterations,
		Token: derive(token, salt, fingerprintIterations)}, nil
}

// remember keeps what a provisioning just succeeded with: fp, a token's
// fingerprint, or a resolver ID's kind.
func remember(home string, fp fingerprintFile) error {
	b, err := json.Marshal(fp)
	if err != nil {
		return err
	}
	// SYSTEM and Administrators only on Windows: the home's ACL lets Users
	// read what inherits it.
	name := make([]byte, 8)
	if _, err := rand.Read(name); err != nil {
		return err
	}
	tmp := filepath.Join(home, ".ctrld-install-fingerprint-"+hex.EncodeToString(name)+".tmp")
	f, _, err := safefile.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600,
		safefile.Rules{Owner: safefile.Self(), Private: true, FixMode: 0o600, AdminsOnly: true})
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(tmp)
		return werr
	}
	return os.Rename(tmp, fingerprintPath(home))
}

func forget(home string) error {
	err := os.Remove(fingerprintPath(home))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
