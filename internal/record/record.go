// Package record is the outcome of a run as ctrld-install reports it: the
// --json summary and the durable outcome record in ctrld's home directory
// that inventory scripts and `ctrld-install status` read later.
//
// The record doubles as the run's journal. Before ctrld starts it says
// "running" with the phase reached and ctrld-install's process ID; the final
// outcome replaces it. A run killed outright leaves the journal entry, which
// status reports as INSTALLER_INTERRUPTED once that process is gone.
package record

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
)

// FileName is the record's name in ctrld's home directory.
const FileName = "ctrld-install-result.json"

// maxRecordSize bounds what status reads; a record is a few hundred bytes.
const maxRecordSize = 64 << 10

// Result values.
const (
	ResultOK      = "ok"
	ResultFailed  = "failed"
	ResultRunning = "running"
)

// Action values.
const (
	ActionProvisioned = "provisioned"
	ActionSkipped     = "skipped"
	ActionUpgraded    = "upgraded"    // contract section 9
	ActionUninstalled = "uninstalled" // contract section 12
)

// Phase values of a running record.
const (
	PhaseStarted      = "started"
	PhaseCtrldRunning = "ctrld-running"
	PhaseChecking     = "checking"
)

// Summary is the --json object. Every string in it is a registry value, a
// fixed word of this package, or a version parsed as semver.
type Summary struct {
	Result           string  `json:"result"`
	Action           string  `json:"action,omitempty"`
	Stage            string  `json:"stage"`
	Code             string  `json:"code"`
	ExitCode         int     `json:"exit_code"`
	Class            string  `json:"class"`
	Source           string  `json:"source"`
	Attempts         int     `json:"attempts"`
	ElapsedMS        int64   `json:"elapsed_ms"`
	CtrldVersion     *string `json:"ctrld_version"`
	InstallerVersion string  `json:"installer_version"`
	ResultFile       string  `json:"result_file"`
}

// NewSummary fills the code fields of a summary from the registry.
func NewSummary(c codes.Code) Summary {
	s := Summary{
		Result:   ResultFailed,
		Stage:    string(c.Stage),
		Code:     c.Name,
		ExitCode: c.Exit,
		Class:    string(c.Class),
	}
	if c.IsOK() {
		s.Result = ResultOK
	}
	return s
}

// Record is the outcome record: the summary plus its own version and time,
// and the journal fields while a run is in progress.
type Record struct {
	Version   int    `json:"version"`
	Timestamp string `json:"timestamp"`
	Summary
	Phase string `json:"phase,omitempty"`
	PID   int    `json:"pid,omitempty"`
}

// New returns a record of s stamped at now.
func New(s Summary, now time.Time) Record {
	return Record{Version: 1, Timestamp: now.UTC().Format(time.RFC3339), Summary: s}
}

// Running returns the journal entry for a run in progress.
func Running(phase string, pid int, installerVersion string, now time.Time) Record {
	return Record{
		Version:   1,
		Timestamp: now.UTC().Format(time.RFC3339),
		Summary:   Summary{Result: ResultRunning, InstallerVersion: installerVersion},
		Phase:     phase,
		PID:       pid,
	}
}

// Write stores r at path atomically and durably: a temporary file in the
// same directory, synced, renamed over the old record, then the directory
// synced so the rename itself survives a power cut. Readers see the old
// record or the new one, never a part; a failed write leaves no temporary
// file behind. The file is 0644 whatever the umask: it holds no secret,
// and status and inventory scripts run as other users.
func Write(path string, r Record) error { return write(path, r, true) }

// WriteUnsynced is Write without the sync, for journal entries that update
// a durable one a moment old. A process killed outright loses nothing, since
// the page cache outlives it; only a power cut in the next seconds can. The
// sync is F_FULLFSYNC on macOS and can cost tens of milliseconds, and an
// install writes four records.
func WriteUnsynced(path string, r Record) error { return write(path, r, false) }

func write(path string, r Record, durable bool) (err error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	f, err := os.CreateTemp(filepath.Dir(path), ".ctrld-install-result-*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	// Inventory scripts run as other users; the record holds no secret.
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if _, err = f.Write(b); err != nil {
		return err
	}
	if durable {
		if err = f.Sync(); err != nil {
			return err
		}
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = rename(f.Name(), path); err != nil {
		return err
	}
	if durable {
		syncDir(filepath.Dir(path))
	}
	return nil
}

// rename and syncDir are variables so tests can make the final step fail
// and see the directory synced.
var (
	rename  = os.Rename
	syncDir = syncDirectory
)

// ErrInvalid is returned for a record that cannot be read as one ctrld-install
// wrote. Its text is fixed.
var ErrInvalid = errors.New("the outcome record is not valid")

// Read loads the record at path. A missing file returns an error matching
// fs.ErrNotExist. A record whose code is not registered is invalid, so what
// status prints always comes from the registry.
//
// The file is opened without following a symlink and without blocking, and
// checked on the descriptor: a regular file of at most 64 KiB, owned by root
// or by the user reading it, that group and others cannot write. A FIFO put
// in the record's place must not hang status, a symlink must not point it
// at another file, and a file someone else could have written is not one
// ctrld-install wrote.
func Read(path string) (Record, error) { return read(path, os.Geteuid()) }

func read(path string, uid int) (Record, error) {
	f, err := openRecord(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Record{}, err
		}
		return Record{}, ErrInvalid
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxRecordSize ||
		fi.Mode().Perm()&0o022 != 0 || !ownedBy(fi, uid) {
		return Record{}, ErrInvalid
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRecordSize+1))
	if err != nil || len(b) > maxRecordSize {
		return Record{}, ErrInvalid
	}
	var r Record
	if err := json.Unmarshal(b, &r); err != nil || !r.valid() {
		return Record{}, ErrInvalid
	}
	return r, nil
}

// valid checks every string field against the words this package writes,
// so what status prints from a record is known text even if the file was
// edited by hand.
func (r Record) valid() bool {
	if r.Version != 1 || r.ElapsedMS < 0 || r.Attempts < 0 || r.PID < 0 {
		return false
	}
	if _, err := time.Parse(time.RFC3339, r.Timestamp); err != nil {
		return false
	}
	// Empty is what a summary built before the version was known holds.
	if r.InstallerVersion != "" && !ValidVersion(r.InstallerVersion) {
		return false
	}
	if r.Result == ResultRunning {
		switch r.Phase {
		case PhaseStarted, PhaseCtrldRunning, PhaseChecking:
			return r.PID > 0
		}
		return false
	}
	if r.Phase != "" || r.PID != 0 {
		return false
	}
	c, ok := codes.Agrees(r.Stage, r.Code, r.ExitCode)
	if !ok || string(c.Class) != r.Class || (r.Result == ResultOK) != c.IsOK() {
		return false
	}
	if r.Result != ResultOK && r.Result != ResultFailed {
		return false
	}
	if r.CtrldVersion != nil && !(ValidVersion(*r.CtrldVersion) && parse.IsDisplayVersion(*r.CtrldVersion)) {
		return false
	}
	return oneOf(r.Action, actionWords...) &&
		oneOf(r.Source, sourceWords...) &&
		oneOf(r.ResultFile, resultFileWords...)
}

// The words a record's fields may hold; anything else makes it invalid.
// Empty is a summary that did not get that far.
var (
	actionWords     = []string{"", ActionProvisioned, ActionSkipped, ActionUpgraded, ActionUninstalled}
	sourceWords     = []string{"", "installer", "result-file", "identifier-line", "exit-status", "legacy-output", "post-conditions"}
	resultFileWords = []string{"", "absent", "used", "stale", "untrusted", "invalid"}
)

// maxPrerelease bounds a version's pre-release: the longest ctrld-install
// stamps is git describe's "4-g" and 12 hex digits after a tag.
const maxPrerelease = 32

// ValidVersion reports whether s may be shown as a version: plain semver
// MAJOR.MINOR.PATCH without leading zeros, with an optional pre-release of
// at most 32 characters from [0-9A-Za-z.-] and no build metadata. That is
// every version ctrld-install stamps (0.1.0-dev, 1.2.0, 1.2.0-4-gabcdef012345)
// and every one parse.DisplayVersion renders, and too short to carry a
// token.
func ValidVersion(s string) bool {
	v, err := semver.StrictNewVersion(s)
	if err != nil || v.Metadata() != "" || len(v.Prerelease()) > maxPrerelease {
		return false
	}
	// StrictNewVersion takes no leading "v" and no missing parts; the round
	// trip also refuses anything it would have normalised.
	return v.String() == s
}

func oneOf(s string, words ...string) bool {
	for _, w := range words {
		if s == w {
			return true
		}
	}
	return false
}
