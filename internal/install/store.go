package install

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
// one name, replaced only by writePrivate, and never printed: the kept
// provisioning holds the resolver ID, the fingerprint a keyed hash of the
// token.
const (
	// keptBinaryName is a copy of the last ctrld build that verified here:
	// what a failed upgrade is rolled back to, since a package replaced
	// the file on disk. keptInfoName says which build it is, by its hash.
	keptBinaryName = ".ctrld-install.kept-ctrld"
	keptInfoName   = ".ctrld-install.kept.json"
	// txName is the change under way or on probation: what ran before
	// (the provisioning and the kept build's hash), written before the
	// service is touched, so that the next run can bring it back.
	txName = ".ctrld-install.tx.json"
	// refusedName is what was rolled back here for a cause that a rerun
	// cannot change: a build by its hash, a request by a keyed hash.
	refusedName = ".ctrld-install.refused"
	// fingerprintName is a keyed hash of the token the service was last
	// provisioned with (fingerprint.go).
	fingerprintName = ".ctrld-install.fingerprint"
	// tmpPrefix starts every temporary file ctrld-install makes, in the
	// home and beside the ctrld binary: a run killed while it copied
	// leaves one, which the next run removes.
	tmpPrefix = ".ctrld-install-"
)

// privateNames are the files uninstall removes once ctrld is gone.
var privateNames = []string{keptBinaryName, keptInfoName, txName, refusedName, fingerprintName, pauseName}

// private are the rules a private file must meet to be read.
var private = safefile.Rules{Owner: safefile.Self(), Private: true, OneLink: true}

// readPrivate decodes a small private JSON file of the home into v.
func readPrivate(home, name string, v any) bool {
	f, _, err := safefile.Open(filepath.Join(home, name), private)
	if err != nil {
		return false
	}
	defer f.Close()
	return json.NewDecoder(io.LimitReader(f, 16<<10)).Decode(v) == nil
}

// writePrivate replaces a private file of the home atomically: a
// temporary file beside it, synced, then renamed over it. A run killed on
// the way leaves the old file whole.
func writePrivate(home, name string, write func(io.Writer) error, perm fs.FileMode) error {
	tmp, err := tempName(home)
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

func writeJSON(v any) func(io.Writer) error {
	return func(w io.Writer) error { return json.NewEncoder(w).Encode(v) }
}

func tempName(dir string) (string, error) {
	rnd := make([]byte, 8)
	if _, err := rand.Read(rnd); err != nil {
		return "", err
	}
	return filepath.Join(dir, tmpPrefix+hex.EncodeToString(rnd)+".tmp"), nil
}

// removeTemporaries removes what a killed run left half written in dir.
// Only regular files with ctrld-install's prefix and suffix: nothing of
// ctrld's.
func removeTemporaries(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if n := e.Name(); e.Type().IsRegular() && strings.HasPrefix(n, tmpPrefix) && strings.HasSuffix(n, ".tmp") {
			os.Remove(filepath.Join(dir, n))
		}
	}
}

// forgetAll removes the private files: ctrld is gone, and what was kept
// of it would be read as the next install's past.
func forgetAll(home string) {
	for _, n := range privateNames {
		os.Remove(filepath.Join(home, n))
	}
}

func removePrivate(home, name string) error {
	err := os.Remove(filepath.Join(home, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// keyedHash is the one form in which a secret is kept: PBKDF2-HMAC-SHA256
// with a random salt of its own, so a copy of the file (a backup, a disk
// image) makes each guess cost Iterations hashes, and precomputed tables
// and the linking of devices that share a secret are of no use.
type keyedHash struct {
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

func newKeyedHash(text string) (*keyedHash, error) {
	salt := make([]byte, 32)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	return &keyedHash{Salt: salt, Iterations: keyedIterations, Hash: derive(text, salt, keyedIterations)}, nil
}

// valid refuses what this program does not write: a cheap hash would make
// a guess cheap, an absurd one a run slow.
func (h *keyedHash) valid() bool {
	return h != nil && len(h.Salt) == 32 && len(h.Hash) == sha256.Size &&
		h.Iterations >= keyedIterations && h.Iterations <= 100*keyedIterations
}

func (h *keyedHash) matches(text string) bool {
	return h.valid() && hmac.Equal(h.Hash, derive(text, h.Salt, h.Iterations))
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

// fileSHA256 hashes the file at path within ctx.
func fileSHA256(ctx context.Context, path string) (string, error) {
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
