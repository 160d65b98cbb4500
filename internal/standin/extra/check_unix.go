//go:build unix

package extra

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/dnscheck"
	"github.com/Control-D-Inc/ctrld-install/internal/listener"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/standin"
)

// ctrld 1.5.0's self-check and the daemon behind it, as the captures of a
// device changed or rebuilt under a healthy service show them
// (shared/reference/captures/README.md, the second table). Only a Device
// with a Listener, or a start with --listen, takes these paths.

const (
	// selfCheckWait bounds start's wait for the listener to answer. ctrld
	// gave up about 1 s after it generated the config
	// (ctrld-1.5.0-change-bad-resolver.txt); the stand-in gives a daemon
	// that comes up late (AnswerDelayMS) a little more.
	selfCheckWait = 2 * time.Second
	// restartSettle is how long after the init script's restart the
	// daemon must still run for restart to call it restarted.
	restartSettle = 300 * time.Millisecond
	// apiRoundTrip is how long the daemon waits for the API's answer.
	apiRoundTrip = 100 * time.Millisecond
	// separator frames the service log in start's report.
	separator = "================================"
)

// stamp is a log line's time as ctrld prints it.
func stamp() string { return time.Now().Format("Jan _2 15:04:05.000") }

// errLine, wrnLine and logLine are ctrld's console lines, coloured as the
// captures show them.
func errLine(msg string) string {
	return "\x1b[90m" + stamp() + "\x1b[0m \x1b[31mERR\x1b[0m \x1b[1m" + msg + "\x1b[0m"
}

func wrnLine(msg, key, value string) string {
	return "\x1b[90m" + stamp() + "\x1b[0m \x1b[33mWRN\x1b[0m \x1b[1m" + msg + "\x1b[0m \x1b[36m" + key +
		"=\x1b[0m\x1b[31m\x1b[1m\"" + value + "\"\x1b[0m\x1b[0m"
}

// logLine is one line of the service log start reports, "???" its level.
func logLine(s string) string {
	if s == "" {
		return "\x1b[90m" + stamp() + "\x1b[0m ???"
	}
	return "\x1b[90m" + stamp() + "\x1b[0m ??? " + s
}

// hasFlag reports whether args has the flag name, with or without "=".
func hasFlag(args []string, name string) bool {
	return slices.ContainsFunc(args, func(a string) bool { return a == name || strings.HasPrefix(a, name+"=") })
}

// flagValue is the value of the last "name V" or "name=V" in args.
func flagValue(args []string, name string) (value string, ok bool) {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == name && i+1 < len(args):
			value, ok = args[i+1], true
			i++
		case strings.HasPrefix(a, name+"="):
			value, ok = a[len(name)+1:], true
		}
	}
	return value, ok
}

// provisionChecked is `ctrld start --cd ID` (or --cd-org) as 1.5.0 runs it
// over whatever is installed: the running service stopped and removed
// without a word (no "Service uninstalled" in change-bad-resolver or
// restore-kept-resolver), the definition written, the config generated,
// the service started, and the listener asked. An answer is "Service
// started", exit 0. No answer is the report of change-bad-resolver or
// change-listen-unavailable, and nothing left: no daemon, no definition,
// exit 1.
func (d *device) provisionChecked(exe string, args []string) int {
	listenFlag := hasFlag(args, "--listen")
	config, configGiven := flagValue(args, "--config")
	shown := config
	switch {
	case !configGiven:
		config = filepath.Join(d.Home, "ctrld.toml")
		shown = config
		if listenFlag {
			// ctrld-1.5.0-change-listen-unavailable.txt names it so.
			shown = "ctrld.toml"
		}
	case !filepath.IsAbs(config):
		config = filepath.Join(d.Home, config) // the daemon runs in its home
	}
	_, err := os.Stat(config)
	exists := err == nil
	if exists && !listenFlag {
		// change-bad-resolver and restore-kept-resolver start so;
		// change-listen-unavailable does not.
		fmt.Println(notice("Reading config: " + shown))
	}
	if d.installed() {
		d.quietScript("stop")
		_ = os.Remove(d.ServiceFile)
	}
	if err := d.install(exe, args); err != nil {
		return 1
	}
	fmt.Println(notice("Starting service"))
	if d.Listener != "" && !(configGiven && exists) {
		if err := writeConfig(config, d.Listener, d.resolverOf(args)); err != nil {
			fmt.Println(errLine("failed to write config: " + err.Error()))
			return 1
		}
		fmt.Println(notice("Generating controld config: " + shown))
	}
	log := filepath.Join(d.LogDir, filepath.Base(d.ServiceFile)+".log")
	from := fileSize(log)
	// The init script's own status does not decide: a daemon that dies at
	// once may still pass its is_running, and the listener is the proof.
	d.quietScript("start")
	target, ok := listener.ListenFlag(args)
	if !ok && !listenFlag {
		b, _ := os.ReadFile(config)
		var state listener.State
		target, state = listener.Addr(b)
		ok = state == listener.Found
	}
	if ok && d.answers(target) {
		fmt.Println(notice("Service started"))
		return 0
	}
	return d.selfCheckFailed(log, from)
}

// resolverOf is the resolver ID the daemon gets: --cd's, or the API's
// for a token.
func (d *device) resolverOf(args []string) string {
	if id, ok := flagValue(args, "--cd"); ok {
		return id
	}
	return d.TokenResolver
}

// quietScript runs the init script with its output dropped: ctrld runs it
// through its service library, which shows none of it.
func (d *device) quietScript(verb string) int {
	cmd := exec.Command("/bin/sh", d.ServiceFile, verb)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		return 1
	}
	return 0
}

// answers asks target one DNS question after another until one is
// answered, the daemon is gone, or selfCheckWait has passed.
func (d *device) answers(target string) bool {
	deadline := time.Now().Add(selfCheckWait)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), min(250*time.Millisecond, time.Until(deadline)))
		ok := dnscheck.Ask(ctx, target) != dnscheck.NoAnswer
		cancel()
		if ok {
			return true
		}
		if !d.running() {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// selfCheckFailed prints start's report of a failed self-check, with what
// the daemon wrote to its log since from, and removes what is left.
func (d *device) selfCheckFailed(log string, from int64) int {
	// A daemon refused by the API removed the service itself: start then
	// finds "the service is not installed" (change-bad-resolver).
	removed := !d.installed()
	if removed {
		fmt.Println(wrnLine("could not get service status", "error", "the service is not installed"))
	}
	fmt.Println(errLine("ctrld service may not have started due to an error or misconfiguration, service log:"))
	fmt.Println(logLine(separator))
	text := strings.TrimRight(readFrom(log, from), "\n")
	if text == "" {
		// The stray quote is ctrld's (change-listen-unavailable).
		fmt.Println(logLine(`<no log output is obtained from ctrld process>"`))
	}
	for l := range strings.SplitSeq(text, "\n") {
		if text != "" {
			fmt.Println(logLine(l))
		}
	}
	fmt.Println(logLine(separator))
	if removed {
		fmt.Println(logLine("An error occurred while performing test query: the service is not installed"))
		fmt.Println(logLine(separator))
		fmt.Println(errLine("the service is not installed"))
	}
	// Nothing is left, as the captures' "after" lines say: a silent
	// daemon still runs and is stopped, the definition goes.
	if pid := readPID(d.pidFile()); alive(pid) {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		for i := 0; i < 100 && alive(pid); i++ {
			time.Sleep(10 * time.Millisecond)
		}
	}
	_ = os.Remove(d.ServiceFile)
	_ = os.Remove(d.pidFile())
	if !removed {
		fmt.Println(notice("Service uninstalled"))
	}
	return 1
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// readFrom is what path holds past offset from.
func readFrom(path string, from int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	return string(b)
}

// tomlCD is ctrld.toml as 1.5.0 writes it after `start --cd`
// (ctrld-1.5.0-toml-cd.txt), its listener and resolver as parameters.
const tomlCD = `# AUTO-GENERATED VIA CD FLAG - DO NOT MODIFY

[listener]
  [listener.0]
    ip = '%s'
    port = %s

    [listener.0.policy]
      name = 'My Policy'
      rules = [
        {        'excluded.canary.test' = []}
      ]

[network]
  [network.0]
    name = 'Network 0'
    cidrs = ['0.0.0.0/0']

[upstream]
  [upstream.0]
    type = 'doh'
    endpoint = 'https://doh.canary.controld.com/%s'
    timeout = 5000
`

func writeConfig(path, listener, resolver string) error {
	ip, port, err := net.SplitHostPort(listener)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, fmt.Appendf(nil, tomlCD, ip, port, resolver), 0o644)
}

// daemon is `ctrld run` as the init script starts it, in its home, its
// stdout on the service's log. With a Device it is 1.5.0's daemon: it
// fetches its resolver's config (refused for an ID not in Resolvers) and
// serves DNS on its --listen address or its config's listener, when the
// Device has a Listener or --listen is given. Otherwise it runs until it
// is stopped.
func daemon(s standin.Script, args []string) int {
	d := (*device)(s.Device)
	if d == nil {
		time.Sleep(24 * time.Hour)
		return 0
	}
	d.markUp()
	if id, ok := flagValue(args, "--cd"); ok && len(d.Resolvers) > 0 && !slices.Contains(d.Resolvers, id) {
		return d.refused()
	}
	listenFlag := hasFlag(args, "--listen")
	if d.Listener == "" && !listenFlag {
		time.Sleep(24 * time.Hour)
		return 0
	}
	addr, ok := listener.ListenFlag(args)
	if !listenFlag {
		config, _ := flagValue(args, "--config")
		b, _ := os.ReadFile(config)
		var state listener.State
		addr, state = listener.Addr(b)
		ok = state == listener.Found
	}
	var pc net.PacketConn
	var err error
	if ok {
		pc, err = net.ListenPacket("udp", addr)
	}
	if !ok || err != nil {
		afterScript()
		if listenFlag {
			// The line the captures' README gives for this daemon; on
			// stderr, the service's .err log, as start's report of
			// change-listen-unavailable shows no log output.
			fmt.Fprintln(os.Stderr, stamp()+` FTL "listen" and "primary_upstream" flags must be set in no config mode`)
		}
		return 1
	}
	defer pc.Close()
	ready := time.Now().Add(time.Duration(d.AnswerDelayMS) * time.Millisecond)
	v, _ := parse.ParseVersionLoose(s.Version)
	selfCheck := v != nil && parse.FlagSupported(v, parse.FeatureSelfCheckName)
	buf := make([]byte, 4096)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return 1
		}
		if d.Silent || time.Now().Before(ready) {
			continue
		}
		if r := answer(buf[:n], selfCheck); r != nil {
			_, _ = pc.WriteTo(r, from)
		}
	}
}

// afterScript waits until the init script that started this daemon has
// returned, for at most 5 s. A daemon refused by the API, or without a
// listener it can use, dies after ctrld's first round trip to the API,
// well after the script's is_running looked, and the captures show the
// script's start succeeding; a stand-in that died first would race that
// look, and its start would fail or not by the machine's load. A daemon
// not started by a shell does not wait.
func afterScript() {
	parent := os.Getppid()
	comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", parent))
	switch strings.TrimSpace(string(comm)) {
	case "sh", "dash", "bash":
	default:
		return
	}
	for deadline := time.Now().Add(5 * time.Second); os.Getppid() == parent && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
}

// refused is the daemon whose resolver the API does not know: the log of
// ctrld-1.5.0-change-bad-resolver.txt, the service removed, exit 1.
func (d *device) refused() int {
	// The API's refusal came 44 ms after the daemon's first line in the
	// capture: long enough for the init script's is_running, which looks
	// right after it started the daemon, to find it running; under load
	// it may not be, and afterScript makes sure.
	time.Sleep(apiRoundTrip)
	afterScript()
	for _, l := range []string{
		"NTC internal logging enabled",
		"ERR no answer from OS resolver",
		`WRN could not fetch resolver config error="Device does not exist" mode=cd`,
		"",
		`FTL failed to fetch resolver config error="Device does not exist" mode=cd`,
	} {
		if l == "" {
			fmt.Println()
			continue
		}
		fmt.Println(stamp() + " " + l)
	}
	_ = os.Remove(d.ServiceFile)
	return 1
}

// answer is the response to a DNS query: its header with QR and RA set,
// NOERROR, its question echoed, no records; nil for what is not a query.
// A release that answers ctrld.test. itself (selfCheck) answers it with
// 0.0.0.0, as ctrld-selfcheck-name.txt shows; any other name gets what
// the upstream would say, which the check does not read.
func answer(q []byte, selfCheck bool) []byte {
	if len(q) < 12 || q[2]&0x80 != 0 {
		return nil
	}
	end, ok := dnscheck.QuestionsEnd(q)
	if !ok {
		return nil
	}
	r := append([]byte(nil), q[:end]...)
	r[2] = 0x80 | q[2]&0x79 // QR, the opcode and RD kept; AA and TC clear
	r[3] = 0x80             // RA, RCODE 0
	clear(r[6:12])          // no answer, authority or additional records
	self := dnscheck.Query(0, dnscheck.QueryName)
	if selfCheck && q[5] == 1 && q[4] == 0 && bytes.EqualFold(q[12:end], self[12:]) {
		r[7] = 1 // one answer: ctrld.test. A 0.0.0.0, named by a pointer to the question
		r = append(r, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0)
	}
	return r
}
