//go:build unix

// Command ctrld-bench measures ctrld-install against its performance
// budgets and prints one table. Every figure is a ratio or a bound taken
// side by side in the same run, because the machines it runs on are shared
// and noisy. bench/README.md explains each figure; docs/performance.md
// records the last measurement.
//
//	go run ./bench/cmd/ctrld-bench [-quick] [-runs N]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

type config struct {
	runs        int   // pairs for the wrapper overhead, runs for the time to verdict
	scanRuns    int   // runs of each side of the throughput figures
	logBytes    int64 // size of the generated ctrld log
	floodBytes  int64 // what ctrld prints in the memory figure
	memRuns     int
	timeout     time.Duration // ctrld-install's --timeout in the timeout figure
	timeoutRuns int
	keep        bool
	only        map[string]bool // figures to take; all when empty

	fleetDevices int // devices of the generated fleet in the fleet report figures
	fleetRuns    int // runs of summarize, and renders of its page
}

// figureNames are the names -only takes, in the table's order.
var figureNames = []string{"overhead", "throughput", "memory", "verdict", "timeout", "size", "fleet"}

func main() {
	cfg := config{}
	quick := flag.Bool("quick", false, "small sizes and few runs: checks that every figure can be taken, measures little")
	flag.IntVar(&cfg.runs, "runs", 40, "`pairs` of runs for the wrapper overhead and runs for the time to verdict")
	flag.IntVar(&cfg.scanRuns, "scan-runs", 5, "runs of each side of the throughput figures")
	logMB := flag.Int64("log-mb", 100, "size of the generated ctrld log in MB (10^6 bytes)")
	floodMB := flag.Int64("flood-mb", 500, "MiB ctrld prints in the memory figure")
	flag.IntVar(&cfg.memRuns, "mem-runs", 3, "runs of the memory figure")
	flag.DurationVar(&cfg.timeout, "timeout", 2*time.Second, "ctrld-install's --timeout in the timeout figure")
	flag.IntVar(&cfg.timeoutRuns, "timeout-runs", 3, "runs of the timeout figure")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the work directory (binaries, generated log)")
	flag.IntVar(&cfg.fleetDevices, "fleet-devices", 100_000, "devices of the generated fleet in the fleet report figures")
	flag.IntVar(&cfg.fleetRuns, "fleet-runs", 3, "runs of summarize on the fleet, and renders of its page")
	only := flag.String("only", "", "comma-separated figures to take, of: "+strings.Join(figureNames, ","))
	flag.Parse()
	if flag.NArg() > 0 {
		fatalf("no arguments are taken besides flags")
	}
	if *only != "" {
		cfg.only = map[string]bool{}
		for _, f := range strings.Split(*only, ",") {
			if !slices.Contains(figureNames, f) {
				fatalf("-only takes %s", strings.Join(figureNames, ", "))
			}
			cfg.only[f] = true
		}
	}
	if *quick {
		cfg.runs, cfg.scanRuns, cfg.memRuns, cfg.timeoutRuns = 8, 2, 1, 1
		cfg.fleetDevices, cfg.fleetRuns = 2000, 1
		*logMB, *floodMB = 10, 50
		cfg.timeout = time.Second
	}
	cfg.logBytes = *logMB * 1000 * 1000
	cfg.floodBytes = *floodMB << 20
	if cfg.runs < 1 || cfg.scanRuns < 1 || cfg.memRuns < 1 || cfg.timeoutRuns < 1 || cfg.logBytes <= 0 || cfg.floodBytes <= 0 || cfg.timeout <= 0 || cfg.fleetDevices < 1 || cfg.fleetRuns < 1 {
		fatalf("run counts and sizes must be positive")
	}
	if err := run(cfg, os.Stdout); err != nil {
		fatalf("%s", err)
	}
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "ctrld-bench: error: "+format+"\n", a...)
	os.Exit(1)
}

// progress tells the person waiting what is being measured.
func progress(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "ctrld-bench: "+format+"\n", a...)
}

// row is one line of the table.
type row struct {
	figure   string
	measured string
	budget   string
	result   string // pass, FAIL, skipped
	detail   string
}

func verdict(ok bool) string {
	if ok {
		return "pass"
	}
	return "FAIL"
}

// env is what every figure works with.
type env struct {
	cfg       config
	repo      string
	work      string
	installer string // ctrld-install built as released for this machine
	fake      string // the bench's fake ctrld, named ctrld
	floor     string // bench/cmd/floor: the three calls through the runner and nothing else
	root      bool
}

func run(cfg config, out io.Writer) error {
	repo, err := repoRoot()
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "ctrld-bench-*")
	if err != nil {
		return err
	}
	if cfg.keep {
		progress("work directory: %s", work)
	} else {
		defer os.RemoveAll(work)
	}
	e := &env{cfg: cfg, repo: repo, work: work, root: os.Geteuid() == 0,
		installer: filepath.Join(work, "ctrld-install"), fake: filepath.Join(work, "bin", "ctrld"),
		floor: filepath.Join(work, "floor")}
	progress("building ctrld-install and the fake ctrld")
	if err := e.goBuild(nil, e.installer, "./cmd/ctrld-install"); err != nil {
		return err
	}
	if err := e.goBuild(nil, e.fake, "./bench/cmd/fakectrld"); err != nil {
		return err
	}
	if err := e.goBuild(nil, e.floor, "./bench/cmd/floor"); err != nil {
		return err
	}
	started := time.Now()
	load0 := loadAverage()

	var rows []row
	type figure struct {
		key, name string
		needRoot  bool
		fn        func() ([]row, error)
	}
	for _, f := range []figure{
		{"overhead", "wrapper overhead", true, e.wrapperOverhead},
		{"throughput", "classifier throughput", false, e.throughput},
		{"memory", "memory", true, e.memory},
		{"verdict", "time to verdict", true, e.timeToVerdict},
		{"timeout", "timeout precision", true, e.timeoutPrecision},
		{"size", "size", false, e.size},
		{"fleet", "fleet report", false, e.fleetReport},
	} {
		if cfg.only != nil && !cfg.only[f.key] {
			continue
		}
		if f.needRoot && !e.root {
			rows = append(rows, row{figure: f.name, result: "skipped", detail: "ctrld-install install needs root"})
			continue
		}
		progress("measuring %s", f.name)
		r, err := f.fn()
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		rows = append(rows, r...)
	}

	fmt.Fprintf(out, "ctrld-install benchmarks, %s\n", started.UTC().Format(time.RFC3339))
	fmt.Fprintf(out, "machine: %s/%s, %d CPUs, %s memory, %s; load average %s at start, %s at end\n",
		runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), totalMemory(), goVersion(), load0, loadAverage())
	fmt.Fprintf(out, "took %s\n\n", time.Since(started).Round(time.Second))
	printTable(out, rows)
	for _, r := range rows {
		if r.result == "FAIL" {
			return errOverBudget
		}
	}
	return nil
}

// errOverBudget is returned after the table when a figure failed.
var errOverBudget = errors.New("a figure is over its budget")

func printTable(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| figure | measured | budget | result | side by side |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", r.figure, r.measured, r.budget, r.result, r.detail)
	}
}

// repoRoot is the module's directory, wherever the command is run from
// inside it.
func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("cannot run go env: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run this inside the ctrld-install module")
	}
	return filepath.Dir(mod), nil
}

// goBuild builds pkg as a release would (static, trimmed, stripped) for
// this machine, or for extra's GOOS and GOARCH.
func (e *env) goBuild(extra []string, out, pkg string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, pkg)
	cmd.Dir = e.repo
	cmd.Env = append(append(os.Environ(), "CGO_ENABLED=0"), extra...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return nil
}

func goVersion() string {
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return runtime.Version()
	}
	return strings.TrimSpace(string(out))
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func totalMemory() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		var kb int64
		if _, err := fmt.Sscanf(l, "MemTotal: %d kB", &kb); err == nil {
			return fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
		}
	}
	return "unknown"
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
