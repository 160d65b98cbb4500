// Package store keeps ctrld-install's private files in ctrld's home: the
// kept build and what it is, the change under way or on probation, the
// refusals, the pause of a request refused for good and the token's
// fingerprint. Its rule: each is root's, 0600 or 0700 (SYSTEM and
// Administrators on Windows), of one name, replaced only whole through one
// atomic writer (Write), read back only when it still is all of that, and
// never printed; a secret is kept only as one keyed hash (KeyedHash).
package store

import (
	"context"
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
	"strings"

	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
)

// The home's private files: what ctrld-install keeps of a device between
// runs. Each is root's, 0600 (SYSTEM and Administrators on Windows), with
// one name, replaced only by WriteWith, and never printed: the kept
// provisioning holds the resolver ID, the fingerprint a keyed hash of the
// token.
const (
	// KeptBinary is a copy of the last ctrld build that verified here:
	// what a failed upgrade is rolled back to, since a package replaced
	// the file on disk. KeptInfo says which build it is, by its hash.
	KeptBinary = ".ctrld-install.kept-ctrld"
	KeptInfo   = ".ctrld-install.kept.json"
	// Tx is the change under way or on probation: what ran before
	// (the provisioning and the kept build's hash), written before the
	// service is touched, so that the next run can bring it back.
	Tx = ".ctrld-install.tx.json"
	// Refused is what was rolled back here for a cause that a rerun
	// cannot change: a build by its hash, a request by a keyed hash.
	Refused = ".ctrld-install.refused"
	// Fingerprint is a keyed hash of the token the service was last
	// provisioned with (fingerprint.go).
	Fingerprint = ".ctrld-install.fingerprint"
	// Pause is a request refused for good, and when it may be sent again.
	Pause = ".ctrld-install.pause.json"
	// TmpPrefix starts every temporary file ctrld-install makes, in the
	// home and beside the ctrld binary: a run killed while it copied
	// leaves one, which the next run removes.
	TmpPrefix = ".ctrld-install-"
)

// names are the files uninstall removes once ctrld is gone.
var names = []string{KeptBinary, KeptInfo, Tx, Refused, Fingerprint, Pause}

// Private are the rules a private file must meet to be read.
var Private = safefile.Rules{Owner: safefile.Self(), Private: true, OneLink: true}

// Read decodes a small private JSON file of the home into v.
func Read(home, name string, v any) bool {
	f, _, err := safefile.Open(filepath.Join(home, name), Private)
	if err != nil {
		return false
	}
	defer f.Close()
	return json.NewDecoder(io.LimitReader(f, 16<<10)).Decode(v) == nil
}

// WriteWith replaces a private file of the home atomically: a
// temporary file beside it, synced, then renamed over it. A run killed on
// the way leaves the old file whole.
func WriteWith(home, name string, write func(io.Writer) error, perm fs.FileMode) error {
	tmp, err := TempName(home)
	if err != nil {
		return err
	}
	f, _, err := safefile.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm,
		safefile.Rules{Owner: safefile.Self(), Private: true, FixMode: perm, AdminsOnly: true})
	if err != nil {
		return err
	}
	werr := write(f)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, filepath.Join(home, name))
	}
	if werr != nil {
		os.Remove(tmp)
		return werr
	}
	safefile.SyncDir(home)
	return nil
}

func jsonOf(v any) func(io.Writer) error {
	return func(w io.Writer) error { return json.NewEncoder(w).Encode(v) }
}

// Write replaces the private file name with v as JSON, 0600.
func Write(home, name string, v any) error { return WriteWith(home, name, jsonOf(v), 0o600) }

func TempName(dir string) (string, error) {
	rnd := make([]byte, 8)
	if _, err := rand.Read(rnd); err != nil {
		return "", err
	}
	return filepath.Join(dir, TmpPrefix+hex.EncodeToString(rnd)+".tmp"), nil
}

// RemoveTemporaries removes what a killed run left half written in dir.
// Only regular files with ctrld-install's prefix and suffix: nothing of
// ctrld's.
func RemoveTemporaries(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if n := e.Name(); e.Type().IsRegular() && strings.HasPrefix(n, TmpPrefix) && strings.HasSuffix(n, ".tmp") {
			os.Remove(filepath.Join(dir, n))
		}
	}
}

// RemoveAll removes the private files: ctrld is gone, and what was kept
// of it would be read as the next install's past.
func RemoveAll(home string) {
	for _, n := range names {
		os.Remove(filepath.Join(home, n))
	}
}

func Remove(home, name string) error {
	err := os.Remove(filepath.Join(home, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// KeyedHash is the one form in which a secret is kept: PBKDF2-HMAC-SHA256
// with a random salt of its own, so a copy of the file (a backup, a disk
// image) makes each guess cost Iterations hashes, and precomputed tables
// and the linking of devices that share a secret are of no use.
type KeyedHash struct {
	Salt       []byte `json:"salt"`
	Iterations int    `json:"iterations"`
	Hash       []byte `json:"hash"`
}

// keyedIterations: about 2 ms on the machines this runs on.
const keyedIterations = 10000

func derive(text string, salt []byte, iterations int) []byte {
	k, err := pbkdf2.Key(sha256.New, text, salt, iterations, sha256.Size)
	if err != nil {
		return nil
	}
	return k
}

func NewKeyedHash(text string) (*KeyedHash, error) {
	salt := make([]byte, 32)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	return &KeyedHash{Salt: salt, Iterations: keyedIterations, Hash: derive(text, salt, keyedIterations)}, nil
}

// valid refuses what this program does not write: a cheap hash would make
// a guess cheap, an absurd one a run slow.
func (h *KeyedHash) Valid() bool {
	return h != nil && len(h.Salt) == 32 && len(h.Hash) == sha256.Size &&
		h.Iterations >= keyedIterations && h.Iterations <= 100*keyedIterations
}

func (h *KeyedHash) Matches(text string) bool {
	return h.Valid() && hmac.Equal(h.Hash, derive(text, h.Salt, h.Iterations))
}

// ctxReader ends a copy or a hash of ctrld's binary with the run's budget:
// a binary of gigabytes on a slow disk must not outlast it.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p[:min(len(p), 1<<20)])
}

// FileSHA256 hashes the file at path within ctx.
func FileSHA256(ctx context.Context, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, ctxReader{ctx, f}); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CopyWithin copies r to w, ending when ctx does: a binary of gigabytes on
// a slow disk must not outlast the run's budget.
func CopyWithin(ctx context.Context, w io.Writer, r io.Reader) (int64, error) {
	return io.Copy(w, ctxReader{ctx, r})
}

// Names are the private files, for an uninstall's checks.
func Names() []string { return append([]string(nil), names...) }
