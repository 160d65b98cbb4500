//go:build linux

package realsuite

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// hostState is what the suite could leave on the host: processes and
// mounts of its own directory, the cgroups of its systemd-ns.sh runs, and
// the files ctrld writes outside a namespace. Other work on the machine,
// another run of this suite included, may come and go meanwhile, so only
// this run's own are compared.
type hostState struct {
	procs, mounts, cgroups, files map[string]bool
}

// Paths ctrld writes outside a namespace: init script, unit, home, logs,
// sockets, binary.
var hostPaths = []string{
	"/etc/controld", "/etc/init.d/ctrld", "/etc/systemd/system/ctrld.service",
	"/etc/systemd/system/multi-user.target.wants/ctrld.service", "/var/log/ctrld.log", "/var/log/ctrld.err",
	"/run/ctrld_start.sock", "/run/ctrld_control.sock", "/usr/local/bin/ctrld", "/etc/sysconfig/ctrld",
	"/etc/rc?.d/*ctrld",
}

// sdnsPIDs are the systemd-ns.sh processes this run started: each names
// its cgroup systemd-ns-PID.
var (
	sdnsMu   sync.Mutex
	sdnsPIDs []int
)

func observeHost() hostState {
	s := hostState{procs: map[string]bool{}, mounts: map[string]bool{}, cgroups: map[string]bool{}, files: map[string]bool{}}
	for _, p := range processesUnder(suite.dir) {
		s.procs[p] = true
	}
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, suite.dir) {
				s.mounts[line] = true
			}
		}
	}
	sdnsMu.Lock()
	for _, pid := range sdnsPIDs {
		for _, root := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
			p := filepath.Join(root, "systemd-ns-"+strconv.Itoa(pid))
			if _, err := os.Stat(p); err == nil {
				s.cgroups[p] = true
			}
		}
	}
	sdnsMu.Unlock()
	for _, p := range hostPaths {
		m, _ := filepath.Glob(p)
		for _, f := range m {
			s.files[f] = true
		}
	}
	return s
}

// leaksSince lists what is here now and was not in before.
func (s hostState) leaksSince(before hostState) []string {
	var out []string
	for _, kind := range []struct {
		name      string
		now, then map[string]bool
	}{{"process", s.procs, before.procs}, {"mount", s.mounts, before.mounts}, {"cgroup", s.cgroups, before.cgroups}, {"file", s.files, before.files}} {
		for k := range kind.now {
			if !kind.then[k] {
				out = append(out, kind.name+": "+k)
			}
		}
	}
	sort.Strings(out)
	return out
}
