package record

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
	"github.com/Control-D-Inc/ctrld-install/internal/wine"
)

// summary is the record of an install that ended with the code name.
func summary(name string) Summary {
	return FromOutcome(outcome.Outcome{Code: codes.Must(name), Source: outcome.SourceInstaller, Action: outcome.ActionProvisioned}, "0.2.0")
}

func TestWriteAndRead(t *testing.T) {
	p := filepath.Join(wine.TempDir(t), FileName)
	s := summary(codes.ListenerBindFailed)
	s.Attempts = 1
	s.Source = "result-file"
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	if err := Write(p, New(s, now)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	// Windows has no mode bits: Go reports 0666 for a file without the
	// read-only attribute, which the next rename over it needs.
	want := os.FileMode(0o644)
	if runtime.GOOS == "windows" {
		want = 0o666
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("mode of the record = %v, want %v", got, want)
	}

	r, err := Read(p)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if got, want := r.Version, 1; got != want {
		t.Errorf("Read: Version = %d, want %d", got, want)
	}
	if got, want := r.Timestamp, "2026-11-29T12:00:00Z"; got != want {
		t.Errorf("Read: Timestamp = %q, want %q", got, want)
	}
	if got, want := r.Result, ResultFailed; got != want {
		t.Errorf("Read: Result = %q, want %q", got, want)
	}
	if got, want := r.Stage, "listener"; got != want {
		t.Errorf("Read: Stage = %q, want %q", got, want)
	}
	if got, want := r.ExitCode, 41; got != want {
		t.Errorf("Read: ExitCode = %d, want %d", got, want)
	}
	if got, want := r.Class, "fatal"; got != want {
		t.Errorf("Read: Class = %q, want %q", got, want)
	}
	if r.CtrldVersion != nil {
		t.Errorf("Read: CtrldVersion = %q, want nil", *r.CtrldVersion)
	}

	ok := summary(codes.OK)
	if got, want := ok.Result, ResultOK; got != want {
		t.Errorf("summary(OK).Result = %q, want %q", got, want)
	}
	if err := Write(p, New(ok, now)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	r, err = Read(p)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if got, want := r.Code, codes.OK; got != want {
		t.Errorf("Read after the second Write: Code = %q, want %q", got, want)
	}
	assertNoTemp(t, filepath.Dir(p))
}

func TestWriteRenameFailureLeavesOldRecordAndNoTemp(t *testing.T) {
	dir := wine.TempDir(t)
	p := filepath.Join(dir, FileName)
	now := time.Now()
	if err := Write(p, New(summary(codes.OK), now)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	rename = func(string, string) error { return errors.New("injected") }
	t.Cleanup(func() { rename = replaceFile })
	if err := Write(p, New(summary(codes.APIRejected), now)); err == nil {
		t.Fatalf("Write with a failing rename succeeded, want an error")
	}
	r, err := Read(p)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if got, want := r.Code, codes.OK; got != want {
		t.Errorf("Read after a failed Write: Code = %q, want %q: the old record stays whole", got, want)
	}
	assertNoTemp(t, dir)
}

// Write syncs the directory once the new name is in place; WriteUnsynced
// does not. Not parallel: it swaps syncDir.
func TestWriteSyncsTheDirectoryAfterTheRename(t *testing.T) {
	dir := wine.TempDir(t)
	p := filepath.Join(dir, FileName)
	var synced []string
	syncDir = func(d string) {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("syncDir(%q) before the rename: %v", d, err)
		}
		synced = append(synced, d)
	}
	t.Cleanup(func() { syncDir = safefile.SyncDir })
	if err := Write(p, New(summary(codes.OK), time.Now())); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if want := []string{dir}; !slices.Equal(synced, want) {
		t.Errorf("Write synced %q, want %q", synced, want)
	}
	if err := WriteUnsynced(p, New(summary(codes.OK), time.Now())); err != nil {
		t.Fatalf("WriteUnsynced: %v", err)
	}
	if len(synced) != 1 {
		t.Errorf("after WriteUnsynced, synced = %q, want 1 directory: WriteUnsynced syncs nothing", synced)
	}
}

func TestWriteIntoMissingDirectory(t *testing.T) {
	err := Write(filepath.Join(wine.TempDir(t), "missing", FileName), New(summary(codes.OK), time.Now()))
	if err == nil {
		t.Errorf("Write into a missing directory succeeded, want an error")
	}
}

func TestRunningRecord(t *testing.T) {
	p := filepath.Join(wine.TempDir(t), FileName)
	if err := Write(p, Running(CommandInstall, PhaseStarted, 4242, "1.0.0", nil, "", time.Now())); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := WriteUnsynced(p, Running(CommandInstall, PhaseCtrldRunning, 4242, "1.0.0", nil, "", time.Now())); err != nil {
		t.Fatalf("WriteUnsynced: %v", err)
	}
	assertNoTemp(t, filepath.Dir(p))
	r, err := Read(p)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if got, want := r.Result, ResultRunning; got != want {
		t.Errorf("Read: Result = %q, want %q", got, want)
	}
	if got, want := r.Phase, PhaseCtrldRunning; got != want {
		t.Errorf("Read: Phase = %q, want %q", got, want)
	}
	if got, want := r.PID, 4242; got != want {
		t.Errorf("Read: PID = %d, want %d", got, want)
	}
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
			p := filepath.Join(wine.TempDir(t), FileName)
			if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := Read(p); !errors.Is(err, ErrInvalid) {
				t.Errorf("Read(%s): %v, want %v", body, err, ErrInvalid)
			}
		})
	}
	if _, err := Read(filepath.Join(wine.TempDir(t), FileName)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read(missing file): %v, want %v", err, fs.ErrNotExist)
	}
}

func TestValidVersion(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"0.1.0-dev", "0.0.0-dev", "1.2.3", "10.20.30", "1.2.0-4-gabcdef012345", "1.0.0-rc.1", "1.5.0-prerelease",
		"1.0.0-" + strings.Repeat("a", 32)} {
		if !ValidVersion(v) {
			t.Errorf("ValidVersion(%q) = false, want true", v)
		}
	}
	for _, v := range []string{"", "v1.2.3", "1.2", "1", "01.2.3", "1.02.3", "1.2.3-", "1.2.3+build", "1.2.3-rc+build",
		"1.2.3-" + strings.Repeat("a", 33), "1.2.3-CANARY TOKEN", "1.2.3-a..b", "1.2.3_x", "1.2.3-é", " 1.2.3", "1.2.3\n"} {
		if ValidVersion(v) {
			t.Errorf("ValidVersion(%q) = true, want false", v)
		}
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
		p := filepath.Join(wine.TempDir(t), FileName)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Read(p)
		if ok {
			if err != nil {
				t.Errorf("Read(%s): %v, want no error", body, err)
			}
		} else if !errors.Is(err, ErrInvalid) {
			t.Errorf("Read(%s): %v, want %v", body, err, ErrInvalid)
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
		if !ok {
			t.Fatalf("Summary(%s).Outcome() not ok, want ok", o.Code.Name)
		}
		if got, want := back.Code.Name, o.Code.Name; got != want {
			t.Errorf("%s: round trip Code = %q, want %q", o.Code.Name, got, want)
		}
		if got, want := back.Source, o.Source; got != want {
			t.Errorf("%s: round trip Source = %v, want %v", o.Code.Name, got, want)
		}
		if got, want := back.Action, o.Action; got != want {
			t.Errorf("%s: round trip Action = %v, want %v", o.Code.Name, got, want)
		}
		if got, want := back.ServiceLog, o.ServiceLog; got != want {
			t.Errorf("%s: round trip ServiceLog = %v, want %v", o.Code.Name, got, want)
		}
		if got, want := back.CtrldVersion.String(), "1.5.0"; got != want {
			t.Errorf("%s: round trip CtrldVersion = %q, want %q", o.Code.Name, got, want)
		}
	}
}

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, ".ctrld-install-result-*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 0 {
		t.Errorf("temporary files left in %s: %q, want none", dir, m)
	}
}

// A missing stage or exit code must not read as OK's, whose stage is empty
// and whose exit code is 0: a fragment would otherwise count as a success.
func TestDecodeUncheckedLeavesMissingFieldsApart(t *testing.T) {
	r, err := DecodeUnchecked([]byte(`{"result":"ok","code":"OK"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != 1 || r.Stage != "-" || r.ExitCode != -1 {
		t.Errorf("got version %d, stage %q, exit %d; want 1, \"-\", -1", r.Version, r.Stage, r.ExitCode)
	}
	if _, ok := codes.Agrees(r.Stage, r.Code, r.ExitCode); ok {
		t.Error("a fragment without stage and exit agrees with the registry")
	}
	if _, err := DecodeUnchecked([]byte(`{"exit_code":"41"}`)); err == nil {
		t.Error("a string exit code decoded")
	}
}
