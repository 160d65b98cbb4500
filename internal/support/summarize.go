package support

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
)

// MaxLine is the longest line read; longer lines are skipped whole. The
// longest line ctrld-install writes is a few hundred bytes.
const MaxLine = 64 << 10

// MaxObject bounds a JSON region (see the package documentation); an outcome
// record is well under 1 KiB and record.Read refuses one over 64 KiB.
const MaxObject = 64 << 10

// Stats describes what was read besides the outcomes.
type Stats struct {
	Inputs     int // files and streams read
	Unreadable int // files that could not be opened or read to the end
	LongLines  int // lines over MaxLine, skipped
	Running    int // records of a run in progress, not counted as outcomes
}

// Counter counts outcomes in a stream of inputs. Its memory is fixed: a few
// buffers of MaxLine and one count per registered code, however much it reads.
type Counter struct {
	counts []int // by registry position
	stats  Stats

	// latest counts only the last outcome of each input; last is that
	// outcome so far (a registry position, or noOutcome or inProgress).
	latest bool
	last   int

	raw   *bufio.Reader // the input as given
	gz    *gzip.Reader
	text  *bufio.Reader // decompressed
	u16   utf16Reader
	lines *bufio.Reader // what lines are read from

	// The JSON region being read, its scanner state, and the counts of the
	// records in it, merged only if the region holds at least one record.
	region        []byte
	inRegion      bool
	depth         int
	inString      bool
	escaped       bool
	regionCounts  []int
	regionRunning int
	regionRecords int
	regionLast    int
	objStart      int
}

// Values of Counter.last besides a registry position.
const (
	noOutcome  = -1
	inProgress = -2 // a record of a run in progress
)

var codeIndex = func() map[string]int {
	m := map[string]int{}
	for i, c := range codes.All() {
		m[c.Name] = i
	}
	return m
}()

// NewCounter returns an empty counter that counts every outcome it reads.
func NewCounter() *Counter {
	n := len(codes.All())
	return &Counter{
		counts:       make([]int, n),
		regionCounts: make([]int, n),
		raw:          bufio.NewReaderSize(nil, 32<<10),
		text:         bufio.NewReaderSize(nil, MaxLine),
		lines:        bufio.NewReaderSize(nil, MaxLine),
		region:       make([]byte, 0, MaxObject),
		regionLast:   noOutcome,
	}
}

// NewLatestCounter returns an empty counter that counts only the last
// outcome of each input. A device's --log file or install.log holds every
// run it ever made, and an MDM that re-runs the install every 15 minutes
// writes a failure each time: counting them all reports one broken device
// as a hundred. With one input per device, the count is of devices, each
// in the state its last run left it.
func NewLatestCounter() *Counter {
	c := NewCounter()
	c.latest = true
	return c
}

// Read counts the outcomes in one input. An error means the input could not
// be read to the end; what was counted before it stays counted, except for
// a latest counter, which counts nothing from it: its last outcome is
// somewhere in the part that could not be read.
func (c *Counter) Read(r io.Reader) error {
	c.stats.Inputs++
	c.last = noOutcome
	err := c.read(r)
	if err != nil {
		c.stats.Unreadable++
		return err
	}
	if c.latest {
		switch {
		case c.last == inProgress:
			c.stats.Running++
		case c.last >= 0:
			c.counts[c.last]++
		}
	}
	return nil
}

// count records one outcome read as text or closing a JSON region.
func (c *Counter) count(i int) {
	if c.latest {
		c.last = i
		return
	}
	c.counts[i]++
}

// Unreadable records an input that could not be opened.
func (c *Counter) Unreadable() { c.stats.Unreadable++ }

func (c *Counter) read(r io.Reader) error {
	c.raw.Reset(r)
	var src io.Reader = c.raw
	if magic, _ := c.raw.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		if c.gz == nil {
			gz, err := gzip.NewReader(c.raw)
			if err != nil {
				return err
			}
			c.gz = gz
		} else if err := c.gz.Reset(c.raw); err != nil {
			return err
		}
		src = c.gz
	}
	c.text.Reset(src)
	lines := c.text
	bom, _ := c.text.Peek(3)
	switch {
	case bytes.HasPrefix(bom, []byte{0xef, 0xbb, 0xbf}):
		c.text.Discard(3)
	case bytes.HasPrefix(bom, []byte{0xff, 0xfe}), bytes.HasPrefix(bom, []byte{0xfe, 0xff}):
		c.u16 = utf16Reader{r: c.text, bigEndian: bom[0] == 0xfe}
		c.text.Discard(2)
		c.lines.Reset(&c.u16)
		lines = c.lines
	}
	return c.readLines(lines)
}

func (c *Counter) readLines(br *bufio.Reader) error {
	defer c.endRegion()
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			c.stats.LongLines++
			// The part already read belongs to the skipped line; a JSON
			// region cannot continue across it.
			c.abortRegion()
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			continue
		}
		if len(line) > 0 {
			c.line(line)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// line reads one line, newline included.
func (c *Counter) line(line []byte) {
	if c.inRegion {
		if len(c.region)+len(line) > MaxObject {
			c.abortRegion()
			c.text1(line)
			return
		}
		c.scanJSON(line)
		return
	}
	t := bytes.TrimLeft(line, " \t")
	if len(t) > 0 && (t[0] == '{' || t[0] == '[' && bytes.HasPrefix(bytes.TrimLeft(t[1:], " \t"), []byte("{"))) {
		c.inRegion = true
		c.region = c.region[:0]
		c.depth, c.inString, c.escaped = 0, false, false
		c.scanJSON(line)
		return
	}
	c.text1(line)
}

// scanJSON appends a line to the region and follows its braces, evaluating
// each object not nested in another as it closes. The region ends with the
// line on which its braces balance.
func (c *Counter) scanJSON(line []byte) {
	base := len(c.region)
	c.region = append(c.region, line...)
	for i := base; i < len(c.region); i++ {
		b := c.region[i]
		if c.inString {
			switch {
			case c.escaped:
				c.escaped = false
			case b == '\\':
				c.escaped = true
			case b == '"':
				c.inString = false
			}
			continue
		}
		switch b {
		case '"':
			c.inString = true
		case '{':
			if c.depth == 0 {
				c.objStart = i
			}
			c.depth++
		case '[':
			if c.depth > 0 {
				c.depth++
			}
		case '}', ']':
			if c.depth == 0 {
				continue // the brackets of an array of records
			}
			c.depth--
			if c.depth == 0 {
				c.object(c.region[c.objStart : i+1])
			}
		}
	}
	if c.depth == 0 {
		c.endRegion()
	}
}

// endRegion closes the current JSON region: its records are counted, or,
// when it held none, its lines are read as text.
func (c *Counter) endRegion() {
	if !c.inRegion {
		return
	}
	switch {
	case c.regionRecords > 0 && c.latest:
		c.last = c.regionLast
	case c.regionRecords > 0:
		for i, n := range c.regionCounts {
			c.counts[i] += n
		}
		c.stats.Running += c.regionRunning
	default:
		c.textAll(c.region)
	}
	c.resetRegion()
}

// abortRegion reads the region so far as text, for a region that cannot be
// completed within MaxObject.
func (c *Counter) abortRegion() {
	if !c.inRegion {
		return
	}
	c.textAll(c.region)
	c.resetRegion()
}

func (c *Counter) resetRegion() {
	c.inRegion = false
	c.region = c.region[:0]
	clear(c.regionCounts)
	c.regionRunning, c.regionRecords, c.regionLast = 0, 0, noOutcome
	c.depth, c.inString, c.escaped = 0, false, false
}

func (c *Counter) textAll(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			c.text1(b)
			return
		}
		c.text1(b[:i+1])
		b = b[i+1:]
	}
}

// recordFields are the fields of an outcome record or --json summary that
// identify its outcome. Fields start at values a record cannot hold, so a
// missing field is told from a zero one without allocating pointers.
type recordFields struct {
	Version  int    `json:"version"`
	Result   string `json:"result"`
	Action   string `json:"action"`
	Stage    string `json:"stage"`
	Code     string `json:"code"`
	ExitCode int    `json:"exit_code"`
}

const missing = -1

// object evaluates one JSON object of a region.
func (c *Counter) object(b []byte) {
	r := recordFields{Version: 1, Stage: "-", ExitCode: missing}
	if json.Unmarshal(b, &r) != nil || r.Version != 1 {
		return
	}
	if r.Result == record.ResultRunning {
		c.regionRecords++
		c.regionRunning++
		c.regionLast = inProgress
		return
	}
	if !outcomeActions[r.Action] {
		return
	}
	if r.Result != record.ResultOK && r.Result != record.ResultFailed {
		return
	}
	code, ok := codes.Agrees(r.Stage, r.Code, r.ExitCode)
	if !ok || (r.Result == record.ResultOK) != code.IsOK() {
		return
	}
	c.regionRecords++
	c.regionCounts[codeIndex[code.Name]]++
	c.regionLast = codeIndex[code.Name]
}

// text1 counts the outcomes in one line of text, in the order they appear
// in it, so that the last of a pasted line is the last counted.
func (c *Counter) text1(line []byte) {
	for rest := line; ; {
		at, m := -1, marker{}
		for _, mk := range markers {
			if i := bytes.Index(rest, mk.text); i >= 0 && (at < 0 || i < at) {
				at, m = i, mk
			}
		}
		if at < 0 {
			return
		}
		rest = rest[at+len(m.text):]
		switch m.kind {
		case failureMarker:
			if code, _, ok := codes.ParseIdentifier(rest); ok {
				c.count(codeIndex[code.Name])
			}
		case successMarker:
			c.count(codeIndex[codes.OK])
		case resultMarker:
			name, after := codes.CutName(rest)
			if !bytes.HasPrefix(after, resultClose) {
				continue
			}
			if code, ok := codes.Lookup(string(name)); ok {
				c.count(codeIndex[code.Name])
			}
		}
	}
}

// utf16Reader turns UTF-16 text into bytes with the same line structure:
// ASCII stays, every other code unit becomes '?', which no grammar accepts.
type utf16Reader struct {
	r         *bufio.Reader
	bigEndian bool
}

func (u *utf16Reader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		a, err := u.r.ReadByte()
		if err != nil {
			return n, eofAfter(n, err)
		}
		b, err := u.r.ReadByte()
		if err != nil {
			return n, eofAfter(n, err)
		}
		lo, hi := a, b
		if u.bigEndian {
			lo, hi = b, a
		}
		if hi == 0 && lo < 0x80 {
			p[n] = lo
		} else {
			p[n] = '?'
		}
		n++
		// Hand back whole lines early so a slow pipe is read as it comes.
		if p[n-1] == '\n' && u.r.Buffered() < 2 {
			break
		}
	}
	return n, nil
}

func eofAfter(n int, err error) error {
	if n > 0 && err == io.EOF {
		return nil
	}
	return err
}
