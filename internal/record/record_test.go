package record

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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

func TestInstallerAlive(t *testing.T) {
	assert.False(t, InstallerAlive(0))
	assert.False(t, InstallerAlive(-1))
	assert.False(t, InstallerAlive(os.Getpid()), "a test binary is not ctrld-install")
	assert.False(t, InstallerAlive(1<<22+12345))
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
