package platform

import (
	"bufio"
	"context"
	"strconv"
	"strings"

	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/safefile"
)

// DaemonRunsBinary says whether the service's running daemon was started
// from the ctrld binary at path as it is now (parse.SameYes), from another
// file or an older version of it (parse.SameNo), or that this cannot be
// told (no daemon found, no permission). pidFile is where the service
// definition keeps the daemon's process ID (ctrld's SysV init script);
// with "" the service manager is asked. A package that replaced the binary
// under a running daemon makes it parse.SameNo until the service restarts.
func DaemonRunsBinary(ctx context.Context, pidFile, path string) parse.Same {
	if ctx.Err() != nil {
		return parse.SameUnknown
	}
	for _, pid := range daemonPIDs(ctx, pidFile) {
		if s := processRuns(pid, path); s != parse.SameUnknown {
			return s
		}
	}
	return parse.SameUnknown
}

// readPIDs reads process IDs, one a line, from a file only root (or this
// user) can have written: a PID a user planted would point the check at a
// process of theirs.
func readPIDs(path string) []int {
	f, _, err := safefile.Open(path, safefile.Rules{Owner: safefile.Self(), Private: true})
	if err != nil {
		return nil
	}
	defer f.Close()
	var pids []int
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(pids) < 64 {
		if pid, err := strconv.Atoi(strings.TrimSpace(sc.Text())); err == nil && pid > 1 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// DaemonExecutable names a file from which the service's running daemon
// can be read as it was started, whatever has become of the file on disk
// since: /proc/PID/exe on Linux. "" where no such file exists (macOS,
// Windows) or no daemon is found. ctrld-install keeps a copy of it when a
// package replaced the binary before any build was kept.
func DaemonExecutable(ctx context.Context, pidFile string) string {
	if ctx.Err() != nil {
		return ""
	}
	for _, pid := range daemonPIDs(ctx, pidFile) {
		if p := processExecutable(pid); p != "" {
			return p
		}
	}
	return ""
}

// daemonPIDs are the candidates for the service's daemon: the PID file the
// definition names, or what the service manager keeps.
func daemonPIDs(ctx context.Context, pidFile string) []int {
	if pidFile != "" {
		return readPIDs(pidFile)
	}
	return servicePIDs(ctx)
}
