//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/Control-D-Inc/ctrld-install/bench"
	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/runner"
)

const token = "benchtoken0123456789"

// world is one figure's machine: ctrld's home, where the service file goes
// and where the fake leaves its time stamp.
type world struct {
	home, service, stamp string
}

func (e *env) newWorld(name string) (*world, error) {
	dir := filepath.Join(e.work, name)
	w := &world{home: filepath.Join(dir, "home"), service: filepath.Join(dir, "ctrld.service"), stamp: filepath.Join(dir, "stamp")}
	return w, os.MkdirAll(w.home, 0o750)
}

// installer returns ctrld-install as an MDM would run it: the default
// install action, the token, and paths that keep it inside the world.
func (e *env) installerCmd(w *world, extra ...string) *exec.Cmd {
	args := append([]string{"--ctrld", e.fake, "--home", w.home, "--service-file", w.service, "--token", token}, extra...)
	cmd := exec.Command(e.installer, args...)
	cmd.Env = cleanEnv()
	return cmd
}

// cleanEnv drops the variables ctrld-install reads, so the caller's shell
// cannot change what is measured.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CTRLD_") {
			out = append(out, kv)
		}
	}
	return out
}

func exitCode(err error) (int, error) {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return -1, err
	}
	return 0, nil
}

// runTimed runs cmd and returns its exit status and wall time.
func runTimed(cmd *exec.Cmd) (int, time.Duration, error) {
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	code, err := exitCode(err)
	return code, d, err
}

// wrapperOverhead compares a first enrolment through ctrld-install with the
// same three ctrld calls run bare. The service file is removed before every
// run of either side: ctrld-install's pre-check then finds nothing
// installed and does not run `ctrld status`, so both sides make exactly the
// calls --version, start, status. With the file left in place the
// pre-check would find ctrld healthy and skip start, and the two sides would
// no longer do the same work.
func (e *env) wrapperOverhead() ([]row, error) {
	w, err := e.newWorld("overhead")
	if err != nil {
		return nil, err
	}
	err = bench.SetFakeScript(e.fake, bench.FakeScript{
		Version: "1.5.0",
		Start: bench.FakeAction{WriteFiles: bench.Installed(w.service), Stdout: []string{
			"Mar  4 20:56:15.000 NTC Starting service", "Mar  4 20:56:17.730 NTC Service started"}},
		Status: bench.FakeAction{NeedFile: w.service},
	})
	if err != nil {
		return nil, err
	}
	// Each side returns its wall time and the CPU time of every process it
	// ran. wait4 counts ctrld-install's waited-for children in its CPU time,
	// so the difference of the two CPU times is ctrld-install's own.
	bare := func() (wall, cpu time.Duration, err error) {
		t0 := time.Now()
		for _, args := range [][]string{{"--version"}, {"start", "--cd-org", token}, {"status"}} {
			cmd := exec.Command(e.fake, args...)
			cmd.Dir, cmd.Env = w.home, cleanEnv()
			if err := cmd.Run(); err != nil {
				return 0, 0, fmt.Errorf("bare ctrld %s: %w", args[0], err)
			}
			cpu += cpuTime(cmd.ProcessState)
		}
		return time.Since(t0), cpu, nil
	}
	var lastOut bytes.Buffer
	wrapped := func() (time.Duration, time.Duration, error) {
		cmd := e.installerCmd(w)
		lastOut.Reset()
		cmd.Stdout = &lastOut
		code, d, err := runTimed(cmd)
		if err == nil && code != 0 {
			err = fmt.Errorf("ctrld-install exited %d:\n%s", code, lastOut.String())
		}
		return d, cpuTime(cmd.ProcessState), err
	}
	// The floor: the same three calls from a Go program that runs them as
	// ctrld-install does (through internal/runner) or with os/exec alone,
	// and does nothing else.
	floor := func(extra ...string) func() (time.Duration, time.Duration, error) {
		return func() (time.Duration, time.Duration, error) {
			cmd := exec.Command(e.floor, append(extra, e.fake, w.home, token)...)
			cmd.Env = cleanEnv()
			code, d, err := runTimed(cmd)
			if err == nil && code != 0 {
				err = fmt.Errorf("the floor program exited %d", code)
			}
			return d, cpuTime(cmd.ProcessState), err
		}
	}
	sides := []func() (time.Duration, time.Duration, error){bare, wrapped, floor(), floor("-plain")}
	// Every side starts from nothing installed, as a first enrolment does.
	for i, side := range sides {
		sides[i] = func() (time.Duration, time.Duration, error) {
			if err := os.Remove(w.service); err != nil && !errors.Is(err, os.ErrNotExist) {
				return 0, 0, err
			}
			return side()
		}
	}
	// Warm the page cache and the file system before counting.
	for range 3 {
		for _, side := range sides {
			if _, _, err := side(); err != nil {
				return nil, err
			}
		}
	}
	if !strings.Contains(lastOut.String(), "provisioning succeeded (exit 0)") {
		return nil, fmt.Errorf("ctrld-install did not provision:\n%s", lastOut.String())
	}
	walls := make([][]time.Duration, len(sides))
	var diffs, cpuDiffs []time.Duration
	for i := range e.cfg.runs {
		// Rotate which side goes first, so that none always follows another.
		var wall, cpu [4]time.Duration
		for j := range sides {
			k := (i + j) % len(sides)
			d, c, err := sides[k]()
			if err != nil {
				return nil, err
			}
			wall[k], cpu[k] = d, c
			walls[k] = append(walls[k], d)
		}
		diffs, cpuDiffs = append(diffs, wall[1]-wall[0]), append(cpuDiffs, cpu[1]-cpu[0])
	}
	bareMed := bench.Median(walls[0])
	one := bareMed / 3
	floorRatio := func(side int) float64 { return float64(bench.Median(walls[side])-bareMed) / float64(one) }
	extra := bench.Median(diffs)
	// A ratio to one bare call measured side by side, not milliseconds:
	// this machine's speed changes fivefold from hour to hour.
	ratio := float64(extra) / float64(one)
	return []row{{
		figure:   "wrapper overhead",
		measured: fmt.Sprintf("%s median extra, %.1f× one bare call", ms(extra), ratio),
		budget:   "≤ 4× one bare call",
		result:   verdict(ratio <= 4),
		detail: fmt.Sprintf("ctrld-install %s vs the 3 calls bare %s, so the extra is %.1f× one bare call; ctrld-install's own CPU time %s (medians of %d rotated runs of each side). "+
			"The floor, the same 3 calls from a Go program that does nothing else: %.1f× through internal/runner, %.1f× with os/exec alone",
			ms(bench.Median(walls[1])), ms(bareMed), ratio, ms(bench.Median(cpuDiffs)), e.cfg.runs, floorRatio(2), floorRatio(3)),
	}}, nil
}

func cpuTime(ps *os.ProcessState) time.Duration {
	if ps == nil {
		return 0
	}
	return ps.UserTime() + ps.SystemTime()
}

// throughput generates the realistic ctrld log and scans it two ways, each
// against grep -E with the classifier's patterns reading the same bytes
// from the same kind of producer.
func (e *env) throughput() ([]row, error) {
	captured, err := bench.CapturedLines(filepath.Join(e.repo, "internal", "parse", "testdata", "legacy"))
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(e.work, "ctrld.log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	size, err := bench.WriteLog(io.MultiWriter(f, h), e.cfg.logBytes, captured)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	prefixes, err := bench.CataloguePrefixes(filepath.Join(e.repo, "internal", "parse", "legacy_catalogue.go"))
	if err != nil {
		return nil, err
	}
	patterns := filepath.Join(e.work, "patterns.ere")
	if err := os.WriteFile(patterns, []byte(strings.Join(bench.GrepPatterns(prefixes), "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	grep, err := exec.LookPath("grep")
	if err != nil {
		return nil, err
	}
	cat, err := exec.LookPath("cat")
	if err != nil {
		return nil, err
	}
	logDesc := fmt.Sprintf("%.0f MB log, sha256 %x…", float64(size)/1e6, h.Sum(nil)[:6])

	// grepAfter runs `producer | LC_ALL=C grep -E -i -c -f patterns`. The C
	// locale is grep's fastest mode; -i because the classifier matches
	// messages whatever their case. Its count goes to a pipe, never to
	// /dev/null: GNU grep stops at the first match when it writes there.
	grepAfter := func(producer *exec.Cmd) (time.Duration, error) {
		g := exec.Command(grep, "-E", "-i", "-c", "-f", patterns)
		g.Env = append(cleanEnv(), "LC_ALL=C")
		var count bytes.Buffer
		g.Stdout = &count
		pr, pw, err := os.Pipe()
		if err != nil {
			return 0, err
		}
		producer.Stdout, g.Stdin = pw, pr
		t0 := time.Now()
		if err := g.Start(); err != nil {
			pr.Close()
			pw.Close()
			return 0, err
		}
		perr := producer.Start()
		pr.Close()
		pw.Close()
		if perr == nil {
			perr = producer.Wait()
		}
		gerr := g.Wait()
		d := time.Since(t0)
		if code, _ := exitCode(perr); code != 0 && code != 1 {
			return 0, fmt.Errorf("producer for grep: %v", perr)
		}
		if gerr != nil {
			return 0, fmt.Errorf("grep: %w", gerr)
		}
		if n, _ := strconv.Atoi(strings.TrimSpace(count.String())); n == 0 {
			return 0, errors.New("grep matched no line of the log")
		}
		return d, nil
	}

	// The runner and the classifier alone, in this process: what
	// ctrld-install does with output, without the rest of the run.
	var want string
	inProcess := func() (time.Duration, error) {
		t0 := time.Now()
		s, res, err := bench.ScanThroughRunner(context.Background(), cat, logPath)
		d := time.Since(t0)
		if err != nil {
			return 0, err
		}
		if res.ExitCode != 0 {
			return 0, fmt.Errorf("cat exited %d", res.ExitCode)
		}
		if s.Code() == "" {
			return 0, errors.New("the scan understood nothing in the log")
		}
		want = s.Code()
		return d, nil
	}
	catGrep := func() (time.Duration, error) { return grepAfter(exec.Command(cat, logPath)) }
	ours, theirs, err := alternate(e.cfg.scanRuns, inProcess, catGrep)
	if err != nil {
		return nil, err
	}
	// For reference only: grep reading the file itself, which ctrld-install
	// never can, since ctrld's output reaches it through a pipe.
	var direct []time.Duration
	for range e.cfg.scanRuns {
		g := exec.Command(grep, "-E", "-i", "-c", "-f", patterns, logPath)
		g.Env = append(cleanEnv(), "LC_ALL=C")
		g.Stdout = io.Discard // through a pipe, see grepAfter
		_, d, err := runTimed(g)
		if err != nil {
			return nil, err
		}
		direct = append(direct, d)
	}
	rows := []row{throughputRow("classifier throughput: runner + classifier", size, ours, theirs,
		fmt.Sprintf("cat → runner → identifier + classifier vs cat → grep; grep reading the file itself %.0f MB/s; %s; medians of %d",
			float64(size)/1e6/bench.Median(direct).Seconds(), logDesc, e.cfg.scanRuns))}
	if !e.root {
		rows = append(rows, row{figure: "classifier throughput: whole ctrld-install", result: "skipped", detail: "ctrld-install install needs root"})
		return rows, nil
	}

	// The whole binary: ctrld-install runs the fake, which prints the log
	// and fails, against the same fake's output piped into grep.
	w, err := e.newWorld("throughput")
	if err != nil {
		return nil, err
	}
	if err := bench.SetFakeScript(e.fake, bench.FakeScript{Version: "1.5.0", Start: bench.FakeAction{CatFile: logPath, Exit: 1}}); err != nil {
		return nil, err
	}
	wantExit := codes.Must(want).Exit
	installer := func() (time.Duration, error) {
		// No retries: the code may be a retryable one.
		code, d, err := runTimed(e.installerCmd(w, "--retries", "0"))
		if err == nil && code != wantExit {
			err = fmt.Errorf("ctrld-install exited %d, the scan in process found %s (exit %d)", code, want, wantExit)
		}
		return d, err
	}
	fakeGrep := func() (time.Duration, error) {
		p := exec.Command(e.fake, "start", "--cd-org", token)
		p.Dir, p.Env = w.home, cleanEnv()
		return grepAfter(p)
	}
	ours, theirs, err = alternate(e.cfg.scanRuns, installer, fakeGrep)
	if err != nil {
		return nil, err
	}
	rows = append(rows, throughputRow("classifier throughput: whole ctrld-install", size, ours, theirs,
		fmt.Sprintf("ctrld-install around a ctrld printing the log vs that ctrld → grep; medians of %d", e.cfg.scanRuns)))
	return rows, nil
}

func throughputRow(name string, size int64, ours, theirs time.Duration, detail string) row {
	mbps := func(d time.Duration) float64 { return float64(size) / 1e6 / d.Seconds() }
	ratio := mbps(ours) / mbps(theirs)
	return row{
		figure:   name,
		measured: fmt.Sprintf("%.2f× grep", ratio),
		budget:   "≥ 0.5× grep",
		result:   verdict(ratio >= 0.5),
		detail:   fmt.Sprintf("%.0f MB/s vs grep -E %.0f MB/s; %s", mbps(ours), mbps(theirs), detail),
	}
}

// alternate runs a and b n times each, taking turns at going first, and
// returns their median times.
func alternate(n int, a, b func() (time.Duration, error)) (time.Duration, time.Duration, error) {
	var as, bs []time.Duration
	for i := range n {
		first, second := a, b
		if i%2 == 1 {
			first, second = b, a
		}
		d1, err := first()
		if err != nil {
			return 0, 0, err
		}
		d2, err := second()
		if err != nil {
			return 0, 0, err
		}
		if i%2 == 1 {
			d1, d2 = d2, d1
		}
		as, bs = append(as, d1), append(bs, d2)
	}
	return bench.Median(as), bench.Median(bs), nil
}

// memory takes ctrld-install's peak resident set while ctrld prints a flood
// of log lines and then succeeds, next to the same run with no output.
//
// On Linux the peak is the process's own high-water mark (VmHWM), sampled
// from /proc until it exits. wait4's ru_maxrss is no use there: a child
// that Go starts (vfork, then exec) inherits its parent's peak at exec, so
// it would report at least this harness's own size.
func (e *env) memory() ([]row, error) {
	w, err := e.newWorld("memory")
	if err != nil {
		return nil, err
	}
	source := "VmHWM sampled every 2 ms"
	once := func(flood int64) (peak int64, d time.Duration, err error) {
		err = bench.SetFakeScript(e.fake, bench.FakeScript{
			Version: "1.5.0",
			Start:   bench.FakeAction{WriteFiles: bench.Installed(w.service), FloodBytes: flood},
			Status:  bench.FakeAction{NeedFile: w.service},
		})
		if err != nil {
			return 0, 0, err
		}
		if err := os.Remove(w.service); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, 0, err
		}
		cmd := e.installerCmd(w)
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			return 0, 0, err
		}
		done := make(chan struct{})
		hwm := make(chan int64, 1)
		go func() { hwm <- pollHighWater(cmd.Process.Pid, done) }()
		code, err := exitCode(cmd.Wait())
		d = time.Since(t0)
		close(done)
		peak = <-hwm
		if err == nil && code != 0 {
			err = fmt.Errorf("ctrld-install exited %d", code)
		}
		if peak == 0 {
			// No /proc (macOS): wait4's figure, an upper bound there too.
			peak, source = maxRSS(cmd.ProcessState), "wait4, an upper bound"
		}
		return peak, d, err
	}
	quiet, _, err := once(0)
	if err != nil {
		return nil, err
	}
	var worst int64
	var took []time.Duration
	for range e.cfg.memRuns {
		p, d, err := once(e.cfg.floodBytes)
		if err != nil {
			return nil, err
		}
		worst = max(worst, p)
		took = append(took, d)
	}
	return []row{{
		figure:   fmt.Sprintf("memory while ctrld prints %d MiB", e.cfg.floodBytes>>20),
		measured: mib(worst) + " peak RSS",
		budget:   "< 32 MiB",
		result:   verdict(worst < 32<<20),
		detail: fmt.Sprintf("same run with no output %s; worst of %d; %s; %.0f MB/s through ctrld-install",
			mib(quiet), e.cfg.memRuns, source, float64(e.cfg.floodBytes)/1e6/bench.Median(took).Seconds()),
	}}, nil
}

// maxRSS is the peak resident set wait4 reports: bytes on macOS, KiB
// elsewhere. It includes the largest waited-for child and, on Linux, the
// parent's peak when the process was started.
func maxRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10
}

// pollHighWater samples the process's own high-water mark (Linux VmHWM)
// until done, returning the last value read; 0 where /proc has none.
func pollHighWater(pid int, done <-chan struct{}) int64 {
	path := fmt.Sprintf("/proc/%d/status", pid)
	var last int64
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	for {
		if v := readHWM(path); v > last {
			last = v
		}
		select {
		case <-done:
			return last
		case <-t.C:
		}
	}
}

func readHWM(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var kb int64
		if _, err := fmt.Sscanf(sc.Text(), "VmHWM: %d kB", &kb); err == nil {
			return kb << 10
		}
	}
	return 0
}

// timeToVerdict has the fake print an identifier line, write the time and
// exit 41: a code decided without post-conditions. The time from that stamp
// to the moment this process sees ctrld-install exit covers collecting
// ctrld, reading the evidence, deciding, printing and writing the record.
func (e *env) timeToVerdict() ([]row, error) {
	w, err := e.newWorld("verdict")
	if err != nil {
		return nil, err
	}
	c := codes.Must(codes.ListenerBindFailed)
	err = bench.SetFakeScript(e.fake, bench.FakeScript{
		Version: "1.5.0",
		Start: bench.FakeAction{Stdout: []string{codes.FailureLine(codes.VerbProvisioning, c)},
			StampFile: w.stamp, Exit: c.Exit},
	})
	if err != nil {
		return nil, err
	}
	once := func() (time.Duration, error) {
		if err := os.Remove(w.stamp); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, err
		}
		cmd := e.installerCmd(w)
		code, err := exitCode(cmd.Run())
		end := time.Now()
		if err != nil {
			return 0, err
		}
		if code != c.Exit {
			return 0, fmt.Errorf("ctrld-install exited %d, want %d", code, c.Exit)
		}
		b, err := os.ReadFile(w.stamp)
		if err != nil {
			return 0, err
		}
		ns, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			return 0, err
		}
		return end.Sub(time.Unix(0, ns)), nil
	}
	for range 3 {
		if _, err := once(); err != nil {
			return nil, err
		}
	}
	var ds []time.Duration
	for range e.cfg.runs {
		d, err := once()
		if err != nil {
			return nil, err
		}
		ds = append(ds, d)
	}
	m := bench.Median(ds)
	return []row{{
		figure:   "time to verdict",
		measured: ms(m) + " median",
		budget:   "< 20 ms",
		result:   verdict(m < 20*time.Millisecond),
		detail:   fmt.Sprintf("from ctrld's last act to ctrld-install's exit; slowest %s of %d", ms(bench.Max(ds)), e.cfg.runs),
	}}, nil
}

// timeoutPrecision has the fake ignore SIGTERM and hang; ctrld-install must
// SIGKILL it after the grace and exit with CTRLD_TIMEOUT.
func (e *env) timeoutPrecision() ([]row, error) {
	w, err := e.newWorld("timeout")
	if err != nil {
		return nil, err
	}
	if err := bench.SetFakeScript(e.fake, bench.FakeScript{Version: "1.5.0", Start: bench.FakeAction{IgnoreTerm: true, Hang: true}}); err != nil {
		return nil, err
	}
	want := codes.Must(codes.CtrldTimeout).Exit
	bound := e.cfg.timeout + runner.DefaultGrace + time.Second
	var ds []time.Duration
	for range e.cfg.timeoutRuns {
		code, d, err := runTimed(e.installerCmd(w, "--timeout", e.cfg.timeout.String()))
		if err != nil {
			return nil, err
		}
		if code != want {
			return nil, fmt.Errorf("ctrld-install exited %d, want %d", code, want)
		}
		ds = append(ds, d)
	}
	worst := bench.Max(ds)
	return []row{{
		figure:   "timeout precision",
		measured: fmt.Sprintf("%.2f s slowest", worst.Seconds()),
		budget:   fmt.Sprintf("≤ %s", bound),
		result:   verdict(worst <= bound),
		detail: fmt.Sprintf("--timeout %s + grace %s (SIGTERM ignored, then SIGKILL) + 1 s; median %.2f s of %d",
			e.cfg.timeout, runner.DefaultGrace, bench.Median(ds).Seconds(), e.cfg.timeoutRuns),
	}}, nil
}

// size builds the darwin/arm64 binary as a release does.
func (e *env) size() ([]row, error) {
	out := filepath.Join(e.work, "darwin-arm64", "ctrld-install")
	if err := e.goBuild([]string{"GOOS=darwin", "GOARCH=arm64"}, out, "./cmd/ctrld-install"); err != nil {
		return nil, err
	}
	fi, err := os.Stat(out)
	if err != nil {
		return nil, err
	}
	host, err := os.Stat(e.installer)
	if err != nil {
		return nil, err
	}
	return []row{{
		figure:   "size, darwin/arm64",
		measured: mib(fi.Size()),
		budget:   "< 5 MiB",
		result:   verdict(fi.Size() < 5<<20),
		detail:   fmt.Sprintf("-trimpath -ldflags \"-s -w\", CGO_ENABLED=0; %s/%s built alike %s", runtime.GOOS, runtime.GOARCH, mib(host.Size())),
	}}, nil
}
