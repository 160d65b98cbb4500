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

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
)

// FileName is the record's name in ctrld's home directory.
const FileName = "ctrld-install-result.json"

// Path is the record's path in the home directory.
func Path(home string) string { return filepath.Join(home, FileName) }

// maxRecordSize bounds what status reads; a record is a few hundred bytes.
const maxRecordSize = 64 << 10

// Result values.
const (
	ResultOK      = "ok"
	ResultFailed  = "failed"
	ResultRunning = "running"
	// ResultNotInstalled is only verify's, which writes no record.
	ResultNotInstalled = outcome.ResultNotInstalled
)

// Phase values of a running record.
const (
	PhaseStarted      = "started"
	PhaseCtrldRunning = "ctrld-running"
	PhaseChecking     = "checking"
	// The steps of a change over a healthy device, each journaled before
	// it is taken: what runs is kept, the change applied and verified, and
	// what ran before brought back when it does not hold.
	PhaseSnapshot    = "snapshot"
	PhaseApplying    = "applying"
	PhaseVerifying   = "verifying"
	PhaseRollingBack = "rolling-back"
)

// Summary is the --json object: an outcome.Outcome in JSON words. Every
// string in it is a registry value, a word of the outcome package, or a
// version parsed as semver.
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
	ServiceLog       string  `json:"service_log,omitempty"`
	DryRun           bool    `json:"dry_run,omitempty"`
	// Rollback is "ok" or "failed" when the action is "rolled-back", and
	// "none" for a change made with nothing kept to bring the device back.
	Rollback string `json:"rollback,omitempty"`
	// NextTry (RFC 3339, UTC) is when a request refused for good is sent
	// again: runs before it change nothing.
	NextTry string `json:"next_try,omitempty"`
}

// FromOutcome renders o in JSON words.
func FromOutcome(o outcome.Outcome, installerVersion string) Summary {
	s := Summary{
		Result:           o.Result(),
		Action:           o.Action.String(),
		Stage:            string(o.Code.Stage),
		Code:             o.Code.Name,
		ExitCode:         o.Code.Exit,
		Class:            string(o.Code.Class),
		Source:           o.Source.String(),
		Attempts:         o.Attempts,
		ElapsedMS:        o.Elapsed.Milliseconds(),
		InstallerVersion: installerVersion,
		ResultFile:       o.ResultFile.String(),
		ServiceLog:       o.ServiceLog.String(),
		DryRun:           o.DryRun,
		Rollback:         o.Rollback,
	}
	if !o.NextTry.IsZero() {
		s.NextTry = o.NextTry.UTC().Truncate(time.Second).Format(time.RFC3339)
	}
	if s.ResultFile == "" {
		s.ResultFile = outcome.FileAbsent.String()
	}
	if o.CtrldVersion != nil {
		v := parse.DisplayVersion(o.CtrldVersion)
		s.CtrldVersion = &v
	}
	return s
}

// Outcome reads the summary back into an outcome. ok is false for a
// running record or words this program does not write.
func (s Summary) Outcome() (o outcome.Outcome, ok bool) {
	c, ok := codes.Agrees(s.Stage, s.Code, s.ExitCode)
	if !ok || string(c.Class) != s.Class {
		return o, false
	}
	o.Code = c
	if (s.Result == ResultOK) != c.IsOK() || (s.Result != ResultOK && s.Result != ResultFailed) {
		return o, false
	}
	var ok1, ok2, ok3, ok4 bool
	o.Action, ok1 = outcome.ParseAction(s.Action)
	o.Source, ok2 = outcome.ParseSource(s.Source)
	o.ResultFile, ok3 = outcome.ParseFileState(s.ResultFile)
	o.ServiceLog, ok4 = outcome.ParseFileState(s.ServiceLog)
	if !ok1 || !ok2 || !ok3 || !ok4 || s.Attempts < 0 || s.ElapsedMS < 0 {
		return o, false
	}
	switch {
	case o.Action == outcome.ActionRolledBack && (s.Rollback == outcome.RollbackOK || s.Rollback == outcome.RollbackFailed):
		o.Rollback = s.Rollback
	case o.Action != outcome.ActionRolledBack && s.Rollback == outcome.RollbackNone:
		o.Rollback = s.Rollback
	case s.Rollback != "" || o.Action == outcome.ActionRolledBack:
		return o, false
	}
	if s.NextTry != "" {
		t, err := time.Parse(time.RFC3339, s.NextTry)
		if err != nil || t.UTC().Format(time.RFC3339) != s.NextTry {
			return o, false
		}
		o.NextTry = t
	}
	o.Attempts = s.Attempts
	o.Elapsed = time.Duration(s.ElapsedMS) * time.Millisecond
	if s.CtrldVersion != nil {
		// Only what DisplayVersion writes: the record is read back as it
		// was written, never normalised.
		v, err := parse.ParseVersion(*s.CtrldVersion)
		if err != nil || parse.DisplayVersion(v) != *s.CtrldVersion {
			return o, false
		}
		o.CtrldVersion = v
	}
	if o.Action == outcome.ActionUninstalled {
		o.Command = outcome.Uninstall
	}
	return o, true
}

// Record is the outcome record: the summary plus its own version and time,
// and the journal fields while a run is in progress.
type Record struct {
	Version   int    `json:"version"`
	Timestamp string `json:"timestamp"`
	Summary
	// Command is the command that wrote the record: install, uninstall.
	// An older record has none; it was an install's unless its action says
	// uninstalled.
	Command string `json:"command,omitempty"`
	// Provisioning is what the last provisioning on this device came to
	// (ProvisioningOK, ProvisioningFailed), carried over by the runs that
	// provisioned nothing; "" when none is known.
	Provisioning string `json:"provisioning,omitempty"`
	Phase        string `json:"phase,omitempty"`
	PID          int    `json:"pid,omitempty"`
}

// Command and Provisioning values.
const (
	CommandInstall     = "install"
	CommandUninstall   = "uninstall"
	ProvisioningOK     = "ok"
	ProvisioningFailed = "failed"
)

// New returns a record of s stamped at now.
func New(s Summary, now time.Time) Record {
	return Record{Version: 1, Timestamp: now.UTC().Format(time.RFC3339), Summary: s}
}

// Running returns the journal entry for a run of command in progress. It
// keeps the ctrld version and the provisioning of the outcome it replaces,
// so that a killed run does not lose what is installed.
func Running(command, phase string, pid int, installerVersion string, ctrldVersion *string, provisioning string, now time.Time) Record {
	return Record{
		Version:      1,
		Timestamp:    now.UTC().Format(time.RFC3339),
		Summary:      Summary{Result: ResultRunning, InstallerVersion: installerVersion, CtrldVersion: ctrldVersion},
		Command:      command,
		Provisioning: provisioning,
		Phase:        phase,
		PID:          pid,
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
	rename  = replaceFile
	syncDir = safefile.SyncDir
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
	f, fi, err := safefile.Open(path, safefile.Rules{Owner: uid, Private: true})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Record{}, err
		}
		return Record{}, ErrInvalid
	}
	defer f.Close()
	if fi.Size() > maxRecordSize {
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

// DecodeUnchecked reads one JSON object with a record's fields (an
// outcome record, a --json summary, status's JSON) and judges nothing but
// its syntax: summarize and explain read what devices left and what people
// pasted, and decide themselves what of it counts. A field b lacks is left
// at a value no record holds (stage "-", exit code -1), so a missing stage
// or exit code is not read as OK's; a missing version is 1, since a --json
// summary has none.
func DecodeUnchecked(b []byte) (Record, error) {
	r := Record{Version: 1, Summary: Summary{Stage: "-", ExitCode: -1}}
	err := json.Unmarshal(b, &r)
	return r, err
}

// valid checks every field against the words this program writes, so what
// status prints from a record is known text even if the file was edited by
// hand.
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
	if r.CtrldVersion != nil && !parse.IsDisplayVersion(*r.CtrldVersion) {
		return false
	}
	switch r.Command {
	case "", CommandInstall, CommandUninstall:
	default:
		return false
	}
	switch r.Provisioning {
	case "", ProvisioningOK, ProvisioningFailed:
	default:
		return false
	}
	if r.Result == ResultRunning {
		switch r.Phase {
		case PhaseStarted, PhaseCtrldRunning, PhaseChecking, PhaseSnapshot, PhaseApplying, PhaseVerifying, PhaseRollingBack:
			return r.PID > 0
		}
		return false
	}
	if r.Phase != "" || r.PID != 0 {
		return false
	}
	_, ok := r.Summary.Outcome()
	return ok
}

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
	v, err := parse.ParseVersion(s)
	return err == nil && v.Metadata() == "" && len(v.Prerelease()) <= maxPrerelease
}
