package fleet

import (
	"io/fs"
	"os"

	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
)

// openNamed opens a file named on the command line: a link is followed,
// but the open does not block on a FIFO (or a device that waits for a
// carrier), and only a regular file is kept.
func openNamed(path string) (*os.File, error) {
	f, _, err := safefile.Open(path, safefile.Rules{Follow: true, Owner: safefile.AnyOwner})
	return f, err
}

// openRegularInfo opens a file met during a walk. It refuses a symbolic
// link and does not block on a FIFO swapped in after the directory was
// read, then checks that what it opened is a regular file, whose size it
// returns with it.
func openRegularInfo(path string) (*os.File, fs.FileInfo, error) {
	return safefile.Open(path, safefile.Rules{Owner: safefile.AnyOwner})
}
