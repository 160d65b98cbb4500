package record

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
)

// summary is the record of an install that ended with the code name.
func summary(name string) Summary {
	return FromOutcome(outcome.Outcome{Code: codes.Must(name), Source: outcome.SourceInstaller, Action: outcome.ActionProvisioned}, "0.2.0")
}

func TestWriteAndRead(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	s := summary(codes.ListenerBindFailed)
	s.Attempts = 1
	s.Source = "result-file"
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	require.NoError(t, Write(p, New(s, now)))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())

	r, err := Read(p)
	require.NoError(t, err)
	assert.Equal(t, 1, r.Version)
	assert.Equal(t, "2026-11-29T12:00:00Z", r.Timestamp)
	assert.Equal(t, ResultFailed, r.Result)
	assert.Equal(t, "listener", r.Stage)
	assert.Equal(t, 41, r.ExitCode)
	assert.Equal(t, "fatal", r.Class)
	assert.Nil(t, r.CtrldVersion)

	ok := summary(codes.OK)
	assert.Equal(t, ResultOK, ok.Result)
	require.NoError(t, Write(p, New(ok, now)))
	r, err = Read(p)
	require.NoError(t, err)
	assert.Equal(t, codes.OK, r.Code)
	assertNoTemp(t, filepath.Dir(p))
}

func TestWriteRenameFailureLeavesOldRecordAndNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, FileName)
	now := time.Now()
	require.NoError(t, Write(p, New(summary(codes.OK), now)))
	rename = func(string, string) error { return errors.New("injected") }
	t.Cleanup(func() { rename = os.Rename })
	err := Write(p, New(summary(codes.APIRejected), now))
	require.Error(t, err)
	r, err := Read(p)
	require.NoError(t, err)
	assert.Equal(t, codes.OK, r.Code, "the old record stays whole")
	assertNoTemp(t, dir)
}

// Write syncs the directory once the new name is in place; WriteUnsynced
// does not. Not parallel: it swaps syncDir.
func TestWriteSyncsTheDirectoryAfterTheRename(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, FileName)
	var synced []string
	syncDir = func(d string) {
		_, err := os.Stat(p)
		assert.NoError(t, err, "the rename happened first")
		synced = append(synced, d)
	}
	t.Cleanup(func() { syncDir = syncDirectory })
	require.NoError(t, Write(p, New(summary(codes.OK), time.Now())))
	assert.Equal(t, []string{dir}, synced)
	require.NoError(t, WriteUnsynced(p, New(summary(codes.OK), time.Now())))
	assert.Len(t, synced, 1)
}

func TestWriteIntoMissingDirectory(t *testing.T) {
	err := Write(filepath.Join(t.TempDir(), "missing", FileName), New(summary(codes.OK), time.Now()))
	assert.Error(t, err)
}

func TestRunningRecord(t *testing.T) {
	p := filepath.Join(t.TempDir(), FileName)
	require.NoError(t, Write(p, Running(PhaseStarted, 4242, "1.0.0", nil, time.Now())))
	require.NoError(t, WriteUnsynced(p, Running(PhaseCtrldRunning, 4242, "1.0.0", nil, time.Now())))
	assertNoTemp(t, filepath.Dir(p))
	r, err := Read(p)
	require.NoError(t, err)
	assert.Equal(t, ResultRunning, r.Result)
	assert.Equal(t, PhaseCtrldRunning, r.Phase)
	assert.Equal(t, 4242, r.PID)
}

func TestReadRejects(t *testing.T) {
	for name, body := range map[string]string{
		"not json":            "{",
		"version 2":           `{"version":2,"result":"ok","stage":"","code":"OK","exit_code":0}`,
		"unregistered code":   `{"version":1,"result":"failed","stage":"listener","code":"SECRET_TOKEN","exit_code":41}`,
		"exit disagrees":      `{"version":1,"result":"failed","stage":"listener","code":"LISTENER_BIND_FAILED","exit_code":1}`,
		"unknown phase":       `{"version":1,"timestamp":"2026-11-29T12:00:00Z","result":"running","phase":"SECRET","pid":1}`,
		"bad timestamp":       `{"version":1,"timestamp":"SECRET","result":"ok","stage":"","code":"OK","exit_code":0,"class":"ok"}`,
		"unknown source":      `{"version":1,"timestamp":"2026-11-29T12:00:00Z","result":"ok","stage":"","code":"OK","exit_code":0,"class":"ok","source":"SECRET"}`,
		"class disagrees":     `{"version":1,"timestamp":"2026-11-29T12:00:00Z","result":"ok","stage":"","code":"OK","exit_code":0,"class":"fatal"}`,
		"result disagrees":    `{"version":1,"timestamp":"2026-11-29T12:00:00Z","result":"failed","stage":"","code":"OK","exit_code":0,"class":"ok"}`,
		"bad ctrld version":   `{"version":1,"timestamp":"2026-11-29T12:00:00Z","result":"ok","stage":"","code":"OK","exit_code":0,"class":"ok","ctrld_version":"SECRET"}`,
		"running without pid": `{"version":1,"timestamp":"2026-11-29T12:00:00Z","result":"running","phase":"started"}`,
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), FileName)
			require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
			_, err := Read(p)
			assert.ErrorIs(t, err, ErrInvalid)
		})
	}
	_, err := Read(filepath.Join(t.TempDir(), FileName))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestValidVersion(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"0.1.0-dev", "0.0.0-dev", "1.2.3", "10.20.30", "1.2.0-4-gabcdef012345", "1.0.0-rc.1", "1.5.0-prerelease",
		"1.0.0-" + strings.Repeat("a", 32)} {
		assert.True(t, ValidVersion(v), v)
	}
	for _, v := range []string{"", "v1.2.3", "1.2", "1", "01.2.3", "1.02.3", "1.2.3-", "1.2.3+build", "1.2.3-rc+build",
		"1.2.3-" + strings.Repeat("a", 33), "1.2.3-CANARY TOKEN", "1.2.3-a..b", "1.2.3_x", "1.2.3-é", " 1.2.3", "1.2.3\n"} {
		assert.False(t, ValidVersion(v), v)
	}
}

func TestReadVersionsAndWords(t *testing.T) {
	t.Parallel()
	base := `{"version":1,"timestamp":"2026-11-29T12:00:00Z","result":"ok","stage":"","code":"OK","exit_code":0,"class":"ok"`
	for body, ok := range map[string]bool{
		base + `,"installer_version":"0.1.0-dev","ctrld_version":"1.5.0"}`:          true,
		base + `,"installer_version":"1.2.0-4-gabcdef012345","ctrld_version":null}`: true,
		base + `,"ctrld_version":"1.5.0-rc1"}`:                                      true,
		base + `,"action":"upgraded"}`:                                              true,
		base + `,"action":"uninstalled"}`:                                           true,
		base + `,"action":"SECRET"}`:                                                false,
		base + `,"result_file":"SECRET"}`:                                           false,
		base + `,"installer_version":"1.0.0+CANARYTOKEN"}`:                          false,
		base + `,"installer_version":"v1.0.0"}`:                                     false,
		base + `,"installer_version":"1.0"}`:                                        false,
		base + `,"installer_version":"1.0.0-` + strings.Repeat("A", 33) + `"}`:      false,
		base + `,"ctrld_version":"1.5.0-CANARYTOKEN"}`:                              false,
		base + `,"ctrld_version":"1.5.0+meta"}`:                                     false,
		base + `,"ctrld_version":""}`:                                               false,
	} {
		p := filepath.Join(t.TempDir(), FileName)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		_, err := Read(p)
		if ok {
			assert.NoError(t, err, body)
		} else {
			assert.ErrorIs(t, err, ErrInvalid, body)
		}
	}
}

func TestOutcomeRoundTrip(t *testing.T) {
	v := "1.5.0"
	for _, o := range []outcome.Outcome{
		{Code: codes.Must(codes.OK), Source: outcome.SourcePostConditions, Action: outcome.ActionUpgraded, Attempts: 1},
		{Code: codes.Must(codes.ServiceUninstallFailed), Source: outcome.SourcePostConditions, Action: outcome.ActionUninstalled, Attempts: 1},
		{Code: codes.Must(codes.APIUnreachable), Source: outcome.SourceServiceLog, Action: outcome.ActionProvisioned, ResultFile: outcome.FileStale, ServiceLog: outcome.FileUsed, Attempts: 3},
	} {
		s := FromOutcome(o, "0.2.0")
		s.CtrldVersion = &v
		back, ok := s.Outcome()
		require.True(t, ok, o.Code.Name)
		assert.Equal(t, o.Code.Name, back.Code.Name)
		assert.Equal(t, o.Source, back.Source)
		assert.Equal(t, o.Action, back.Action)
		assert.Equal(t, o.ServiceLog, back.ServiceLog)
		assert.Equal(t, "1.5.0", back.CtrldVersion.String())
	}
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".ctrld-install-result-*"))
	require.NoError(t, err)
	assert.Empty(t, m)
}
