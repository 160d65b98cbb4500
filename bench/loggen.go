// Package bench holds what the performance benchmarks share: the realistic
// ctrld log they scan, the grep patterns that stand for the classifier, the
// scan itself as ctrld-install performs it, the bench's fake ctrld script and
// small statistics. The harness is cmd/ctrld-bench; README.md explains it.
package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
)

// CapturedLines returns every line of the captured ctrld outputs in dir
// (internal/parse/testdata/legacy), in file-name order, except lines that
// alone decide the outcome. A decisive line (not root, deactivation PIN)
// makes the classifier ignore the rest of the output, as ctrld exits right
// after printing one; a log full of them would measure a scan that does
// nothing.
func CapturedLines(dir string) ([][]byte, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no captured logs in %s", dir)
	}
	sort.Strings(names)
	var out [][]byte
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		for _, l := range bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n")) {
			if !decisive(l) {
				out = append(out, l)
			}
		}
	}
	return out, nil
}

func decisive(line []byte) bool {
	c := parse.NewClassifier()
	c.Line(line)
	code, ok := c.Result()
	return ok && (code.Name == codes.InstallerNotRoot || code.Name == codes.DeactivationPinRequired)
}

// logSeed fixes the generated log: the same captured lines and size give
// the same bytes on every machine and every run.
const logSeed = 0x6374726c64

// WriteLog writes at least size bytes of a verbose ctrld start session to w:
// mostly the debug and info lines a daemon prints per DNS query, coloured as
// the replayed daemon log is, in ctrld 1.x and 2.x formats, with a captured
// line mixed in every 25 lines on average. The result is deterministic.
func WriteLog(w io.Writer, size int64, captured [][]byte) (int64, error) {
	if len(captured) == 0 {
		return 0, fmt.Errorf("no captured lines")
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	rng := rand.New(rand.NewPCG(logSeed, logSeed))
	var n int64
	next := 0
	line := make([]byte, 0, 512)
	for n < size {
		line = line[:0]
		if rng.IntN(25) == 0 {
			line = append(line, captured[next%len(captured)]...)
			next++
		} else {
			line = noiseLine(line, rng)
		}
		line = append(line, '\n')
		m, err := bw.Write(line)
		n += int64(m)
		if err != nil {
			return n, err
		}
	}
	return n, bw.Flush()
}

const esc = "\x1b"

var (
	domains = []string{"example.com.", "controld.com.", "apple.com.", "icloud.com.", "googleapis.com.",
		"microsoft.com.", "windowsupdate.com.", "github.com.", "slack.com.", "zoom.us."}
	qtypes    = []string{"A", "AAAA", "HTTPS", "SRV", "TXT", "PTR"}
	upstreams = []string{"upstream.0", "upstream.1", "upstream.os"}
	rcodes    = []string{"NOERROR", "NOERROR", "NOERROR", "NXDOMAIN", "SERVFAIL"}
)

// noiseLine appends one line of the kind a verbose daemon prints per query.
func noiseLine(b []byte, rng *rand.Rand) []byte {
	ms := rng.IntN(60 * 60 * 1000)
	stamp := fmt.Sprintf("Mar  4 %02d:%02d:%02d.%03d", 20+ms/3600000, ms/60000%60, ms/1000%60, ms%1000)
	id := rng.Uint32() & 0xffffff
	d, q := domains[rng.IntN(len(domains))], qtypes[rng.IntN(len(qtypes))]
	up := upstreams[rng.IntN(len(upstreams))]
	colour := rng.IntN(2) == 0
	ts := stamp + " "
	lvl := func(l, c string) string { return l }
	msg := func(s string) string { return s }
	if colour {
		ts = esc + "[90m" + stamp + esc + "[0m "
		lvl = func(l, c string) string { return esc + "[" + c + "m" + l + esc + "[0m" }
		msg = func(s string) string { return esc + "[1m" + s + esc + "[0m" }
	}
	if rng.IntN(3) == 0 {
		// The start command replays the daemon's log as zerolog Write events.
		b = append(b, "Mar  4 20:56:46.020 ??? "...)
	}
	switch rng.IntN(8) {
	case 0, 1:
		return fmt.Appendf(b, "%s%s [%06x] received query: %s %s from 127.0.0.1:%d listener=0",
			ts, lvl("DBG", "0"), id, d, q, 1024+rng.IntN(60000))
	case 2, 3:
		return fmt.Appendf(b, "%s%s %s", ts, lvl("INF", "32"),
			msg(fmt.Sprintf("[%06x] sending query to %s: %s %s", id, up, d, q)))
	case 4, 5:
		return fmt.Appendf(b, "%s%s [%06x] received response of %d bytes in %d.%dms rcode=%s",
			ts, lvl("DBG", "0"), id, 40+rng.IntN(400), rng.IntN(80), rng.IntN(10), rcodes[rng.IntN(len(rcodes))])
	case 6:
		return fmt.Appendf(b, "Nov 29 12:%02d:%02d.%03d\tINFO\tProxying query\t{\"domain\": %q, \"type\": %q, \"upstream\": %q}",
			ms/60000%60, ms/1000%60, ms%1000, d, q, up)
	}
	return fmt.Appendf(b, "%s%s %s", ts, lvl("DBG", "0"),
		fmt.Sprintf("[%06x] %s: cache hit for %s %s, ttl %ds", id, up, d, q, rng.IntN(3600)))
}
