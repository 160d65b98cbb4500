package install

import (
	"crypto/hmac"
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

// fingerprintName is the file in the home that keeps a keyed fingerprint
// of the token the service was last provisioned with. The token is
// exchanged for a resolver by the API, so the service definition names
// the resolver, never the token: without this a new token could not be
// told from the old one. Only root can read it (0600), and it holds an
// HMAC-SHA256 under a random key of its own, never the token nor a plain
// hash of it (a token is short enough to guess from a plain hash).
const fingerprintName = ".ctrld-install.fingerprint"

type fingerprintFile struct {
	Version int    `json:"version"`
	Key     []byte `json:"key"`   // random, 32 bytes
	Token   []byte `json:"token"` // HMAC-SHA256(key, token)
}

func fingerprintPath(home string) string { return filepath.Join(home, fingerprintName) }

func mac(key []byte, token string) []byte {
	h := hmac.New(sha256.New, key)
	io.WriteString(h, "ctrld-install token fingerprint 1\x00")
	io.WriteString(h, token)
	return h.Sum(nil)
}

func readFingerprint(home string) (fingerprintFile, bool) {
	f, fi, err := safefile.Open(fingerprintPath(home), safefile.Rules{Owner: safefile.Self(), Private: true})
	if err != nil {
		return fingerprintFile{}, false
	}
	defer f.Close()
	// Readable by others is not what this program writes. Windows makes
	// mode bits up; the home's ACL protects the file there.
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return fingerprintFile{}, false
	}
	var fp fingerprintFile
	if err := json.NewDecoder(io.LimitReader(f, 4<<10)).Decode(&fp); err != nil || fp.Version != 1 || len(fp.Key) != 32 || len(fp.Token) != sha256.Size {
		return fingerprintFile{}, false
	}
	return fp, true
}

// tokenSame compares token with the one the service was provisioned with.
func tokenSame(home, token string) parse.Same {
	fp, ok := readFingerprint(home)
	if !ok {
		return parse.SameUnknown
	}
	if hmac.Equal(fp.Token, mac(fp.Key, token)) {
		return parse.SameYes
	}
	return parse.SameNo
}

// rememberToken keeps the fingerprint of the token a provisioning just
// succeeded with; a resolver provisioning forgets any.
func rememberToken(home string, s Secret) error {
	if !s.IsToken() {
		return forgetToken(home)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	b, err := json.Marshal(fingerprintFile{Version: 1, Key: key, Token: mac(key, s.value)})
	if err != nil {
		return err
	}
	// Root's alone: 0600 on Unix, and on Windows an ACL of its own, SYSTEM
	// and Administrators, since the home's would let Users read it.
	name := make([]byte, 8)
	if _, err := rand.Read(name); err != nil {
		return err
	}
	tmp, _, err := safefile.OpenFile(filepath.Join(home, ".ctrld-install-fingerprint-"+hex.EncodeToString(name)+".tmp"),
		os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600, safefile.Rules{Owner: safefile.Self(), FixMode: 0o600, AdminsOnly: true})
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), fingerprintPath(home))
}

func forgetToken(home string) error {
	err := os.Remove(fingerprintPath(home))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
