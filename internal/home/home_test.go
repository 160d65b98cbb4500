//go:build unix

package home

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// canary is in every path, and must be in no error.
const canary = "CANARYPATH0123456789"

var self = Checker{UID: os.Geteuid()}

func mkdir(t *testing.T, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), canary)
	require.NoError(t, os.Mkdir(p, 0o700))
	require.NoError(t, os.Chmod(p, mode))
	return p
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) string
		want  error
		text  string
	}{
		{"0755", func(t *testing.T) string { return mkdir(t, 0o755) }, nil, ""},
		{"0750 as ctrld makes it", func(t *testing.T) string { return mkdir(t, 0o750) }, nil, ""},
		{"0700", func(t *testing.T) string { return mkdir(t, 0o700) }, nil, ""},
		{"group writable", func(t *testing.T) string { return mkdir(t, 0o775) }, ErrWritable,
			"the home directory (--home) is writable by group or others"},
		{"world writable", func(t *testing.T) string { return mkdir(t, 0o757) }, ErrWritable, ""},
		{"sticky and world writable", func(t *testing.T) string { return mkdir(t, 0o1777) }, ErrWritable, ""},
		{"symlink to a good home", func(t *testing.T) string {
			link := filepath.Join(t.TempDir(), canary+"-link")
			require.NoError(t, os.Symlink(mkdir(t, 0o755), link))
			return link
		}, ErrSymlink, "the home directory (--home) is a symbolic link"},
		{"dangling symlink", func(t *testing.T) string {
			link := filepath.Join(t.TempDir(), canary)
			require.NoError(t, os.Symlink(filepath.Join(t.TempDir(), "nowhere"), link))
			return link
		}, ErrSymlink, ""},
		{"regular file", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), canary)
			require.NoError(t, os.WriteFile(p, nil, 0o644))
			return p
		}, ErrNotDir, "the home directory (--home) is not a directory"},
		{"fifo", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), canary)
			require.NoError(t, syscall.Mkfifo(p, 0o600))
			return p
		}, ErrNotDir, ""},
		{"missing", func(t *testing.T) string { return filepath.Join(t.TempDir(), canary) }, ErrMissing,
			"the home directory (--home) does not exist"},
		{"parent is a file", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), canary)
			require.NoError(t, os.WriteFile(p, nil, 0o644))
			return filepath.Join(p, "home")
		}, ErrUnreadable, "the home directory (--home) cannot be examined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := self.Check(tc.setup(t))
			if tc.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tc.want)
			assert.NotContains(t, err.Error(), canary)
			if tc.text != "" {
				assert.EqualError(t, err, tc.text)
			}
		})
	}
}

func TestCheckMissingIsNotExist(t *testing.T) {
	t.Parallel()
	err := self.Check(filepath.Join(t.TempDir(), canary))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

// The owner is a parameter, so both answers can be seen without root.
func TestCheckOwner(t *testing.T) {
	t.Parallel()
	dir := mkdir(t, 0o755)
	err := Checker{UID: os.Geteuid() + 1}.Check(dir)
	assert.ErrorIs(t, err, ErrNotOwned)
	assert.EqualError(t, err, "the home directory (--home) is not owned by root")
	assert.NoError(t, Checker{UID: os.Geteuid()}.Check(dir))
}

func TestCheckRefusesAUsersHomeAsRoot(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("changing a directory's owner needs root")
	}
	dir := mkdir(t, 0o755)
	require.NoError(t, os.Chown(dir, 65534, 65534))
	assert.ErrorIs(t, Check(dir), ErrNotOwned)
	assert.ErrorIs(t, Prepare(dir), ErrNotOwned)
}

func TestDefaultIsRoot(t *testing.T) {
	t.Parallel()
	assert.Equal(t, 0, Default.UID)
	if os.Geteuid() == 0 {
		assert.NoError(t, Check(mkdir(t, 0o755)))
	} else {
		assert.ErrorIs(t, Check(mkdir(t, 0o755)), ErrNotOwned)
	}
}

// Prepare creates the home and its parents 0755 whatever the umask, so
// status can reach the record as any user.
func TestPrepareCreatesWithParents(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b", canary)
	require.NoError(t, self.Prepare(dir))
	for _, p := range []string{filepath.Join(root, "a"), filepath.Join(root, "a", "b"), dir} {
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		assert.True(t, fi.IsDir())
		assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), p)
	}
	require.NoError(t, self.Prepare(dir), "a second run finds it ready")
}

func TestPrepareLeavesAnExistingHomeAlone(t *testing.T) {
	t.Parallel()
	dir := mkdir(t, 0o777)
	assert.ErrorIs(t, self.Prepare(dir), ErrWritable)
	fi, err := os.Lstat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o777), fi.Mode().Perm(), "not repaired behind the admin's back")

	link := filepath.Join(t.TempDir(), canary)
	require.NoError(t, os.Symlink(filepath.Join(t.TempDir(), "target"), link))
	assert.ErrorIs(t, self.Prepare(link), ErrSymlink, "a dangling link is not followed to create its target")
	_, err = os.Lstat(filepath.Join(filepath.Dir(link), "target"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
}

func TestPrepareCannotCreate(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), canary)
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	err := self.Prepare(filepath.Join(file, "home"))
	assert.ErrorIs(t, err, ErrCreate)
	assert.EqualError(t, err, "the home directory (--home) cannot be created")
}
