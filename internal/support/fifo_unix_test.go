//go:build unix

package support

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func mkfifo(t *testing.T, path string) {
	require.NoError(t, unix.Mkfifo(path, 0o644))
}
