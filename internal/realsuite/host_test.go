package realsuite

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// hostState is what the suite could leave on the host: ctrld's processes,
// mounts, the cgroups systemd-ns.sh makes, the files ctrld writes outside
// a namespace, and temporary directories of the suite's kind. Other work
// on the machine may come and go meanwhile, so only these are compared.
type hostState struct {
	procs, mounts, cgroups, files map[string]bool
}

// Paths ctrld writes (init script, unit, home, logs, sockets, binary) and
// the temporary directories systemd-ns.sh and this suite make.
var hostPaths = []string{
	"/etc/controld", "/etc/init.d/ctrld", "/etc/systemd/system/ctrld.service",
	"/etc/systemd/system/multi-user.target.wants/ctrld.service", "/var/log/ctrld.log", "/var/log/ctrld.err",
	"/run/ctrld_start.sock", "/run/ctrld_control.sock", "/usr/local/bin/ctrld", "/etc/sysconfig/ctrld",
	"/tmp/systemd-ns.*", "/tmp/ctrld-realsuite-*", "/etc/rc?.d/*ctrld",
}

func observeHost() hostState {
	s := hostState{procs: map[string]bool{}, mounts: map[string]bool{}, cgroups: map[string]bool{}, files: map[string]bool{}}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		// Other work on the machine may run programs called ctrld; the
		// suite's run from its work directories, its copies of the
		// releases, or systemd-ns.sh.
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		c := strings.ReplaceAll(string(cmdline), "\x00", " ")
		if strings.Contains(c, "/ctrld-realsuite-") || strings.Contains(c, "realsuite.test") || strings.Contains(c, "systemd-ns.sh") ||
			strings.HasPrefix(exe, "/tmp/ctrld-realsuite-") || strings.Contains(exe, "/realsuite.test") || suite.releases != "" && strings.HasPrefix(exe, suite.releases) {
			s.procs[fmt.Sprintf("pid %s %s(%s)", e.Name(), c, exe)] = true
		}
	}
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			// Without the mount ID and parent ID, which a remount changes.
			if f := strings.Fields(line); len(f) > 4 {
				s.mounts[strings.Join(f[2:], " ")] = true
			}
		}
	}
	for _, root := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		m, _ := filepath.Glob(filepath.Join(root, "systemd-ns-*"))
		for _, p := range m {
			s.cgroups[p] = true
		}
	}
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
