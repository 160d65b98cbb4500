package fleet

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/fleetreport"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
)

// MaxLine is the longest line read; longer lines are skipped whole. The
// longest line ctrld-install writes is a few hundred bytes.
const MaxLine = 64 << 10

// MaxObject bounds a JSON region (see the package documentation); an outcome
// record is well under 1 KiB and record.Read refuses one over 64 KiB.
const MaxObject = 64 << 10

// A key is what one outcome counts as: a registered code (its registry
// position) or a state (numCodes plus its position in states.All).
type key int

const noKey key = -1

var (
	allCodes = codes.All()
	numCodes = len(allCodes)
	numKeys  = numCodes + len(states.All)
)

var codeIndex = func() map[string]key {
	m := map[string]key{}
	for i, c := range allCodes {
		m[c.Name] = key(i)
	}
	return m
}()

func stateKey(word string) key {
	for i, s := range states.All {
		if s.Word == word {
			return key(numCodes + i)
		}
	}
	panic("fleet: unknown state " + word)
}

var (
	keyOK          = codeIndex[codes.OK]
	keyUninstalled = stateKey(states.Uninstalled)
	keyRunning     = stateKey(states.Running)
	keyNeverRun    = stateKey(states.NeverRun)
	keyInvalid     = stateKey(states.InvalidRecord)
	keyEmpty       = stateKey(states.Empty)
)

func (k key) isState() bool { return int(k) >= numCodes }

// state is the state a key names; only for keys where isState holds.
func (k key) state() states.State { return states.All[int(k)-numCodes] }

// name is the code's name or the state's word.
func (k key) name() string {
	if k.isState() {
		return k.state().Word
	}
	return allCodes[k].Name
}

// keyOfWord is the key of a code name or a state word in <result>, as an
// extension attribute prints it.
func keyOfWord(w []byte) (key, bool) {
	if k, ok := codeIndex[string(w)]; ok {
		return k, true
	}
	for i, s := range states.All {
		if s.Word == string(w) {
			return key(numCodes + i), true
		}
	}
	return noKey, false
}

// mark is where an outcome stands among a device's outcomes: what it
// counted as, when, and where it was read. newer ranks two marks.
type mark struct {
	key    key
	at     int64 // Unix seconds, when dated
	gen    int32 // the input's rotation generation: 0 for a live file, higher is older
	input  int32 // the input's position in the read
	seq    int32 // the outcome's position in its input
	dated  bool
	record bool // read from an outcome record or --json summary
	own    bool // dated by its own line or record, not by one before it
}

// obs is one outcome as read, with what a fleet report shows of it.
type obs struct {
	mark
	version string // ctrld's version, as parse.DisplayVersion writes it
	action  string // an outcome.Action word
}

// newer reports whether a was written after b, for the outcomes of two
// inputs of one device (each input's last outcome, see emit). A dated
// outcome is newer than an undated one. At the same second, a record wins
// over a line dated by its own timestamp (they are one run's, and the
// record says more: its action and version). Among undated ones, or
// otherwise at the same second, a rotated file is older than the one it
// was rotated from, then later inputs win.
func newer(a, b mark) bool {
	switch {
	case a.dated != b.dated:
		return a.dated
	case a.dated && a.at != b.at:
		return a.at > b.at
	case a.own && b.own && a.record != b.record:
		return a.record
	case a.gen != b.gen:
		return a.gen < b.gen
	case a.input != b.input:
		return a.input > b.input
	}
	return a.seq > b.seq
}

// sameRun reports whether a and b are one run read twice: its record and
// its log line, each dated by itself to the same second with one outcome.
func sameRun(a, b mark) bool {
	return a.dated && b.dated && a.own && b.own && a.at == b.at && a.key == b.key
}

// span is what a device keeps of one of its inputs to tell how long it has
// been failing: the input's last outcome, and its trailing streak of
// outcomes that need attention (see Bucket), the first of them and whether
// the streak is the whole input. A device's failures are usually spread
// over several inputs (a log and its rotations, a record beside the log
// of the same runs), read in any order, so the streaks are joined once
// every input is read (see device.streak).
type span struct {
	last   mark
	first  mark // the streak's first outcome
	streak int32
	whole  bool // every outcome of the input is in the streak
}

// device is what the counter keeps of one device: its newest outcome and
// a span of each input that held an outcome.
type device struct {
	name  string
	last  obs
	seen  bool // last holds an outcome
	spans []span
}

// streak is the device's current streak of outcomes that need attention:
// how many, and the first. Starting from the input with the newest
// outcome, an input whose outcomes all need attention continues into the
// next older one; the run a record and its log line both hold counts once.
func (d *device) streak() (n int, first mark) {
	spans := d.spans
	if len(spans) == 0 {
		return 0, mark{}
	}
	sort.Slice(spans, func(i, j int) bool { return newer(spans[i].last, spans[j].last) })
	n, first = int(spans[0].streak), spans[0].first
	if n == 0 || !spans[0].whole {
		return n, first
	}
	for _, sp := range spans[1:] {
		switch {
		case sameRun(sp.last, first):
			n += int(sp.streak) - 1
		case first.dated && sp.last.dated && sp.last.at < first.at:
			n += int(sp.streak)
		default:
			// Undated, or overlapping in time: no order to join them by.
			return n, first
		}
		if sp.streak > 0 {
			first = sp.first
		}
		if !sp.whole {
			break
		}
	}
	return n, first
}

// Counter counts outcomes in a stream of inputs. Its memory is a few
// buffers of MaxLine, one count per code and state, one entry per device
// and one per day, however much it reads.
type Counter struct {
	counts  []int // by key, of every outcome (not used by a latest counter)
	days    map[int64]*dayCounts
	runs    int // every outcome read
	undated int // of them, those without a date
	stats   fleetreport.Stats

	// latest counts only the newest outcome of each device.
	latest bool

	devices map[string]*device
	anon    int // inputs read without a device name
	// lists are the inputs that list devices, one code, state or
	// <result> value a line (see flushBare): each line is a device.
	lists []deviceList
	// own says the input being read is a device of its own (a named file,
	// a file directly under a directory argument, standard input), not one
	// of a device folder's files or a CSV cell: only such an input can be
	// a list of devices.
	own bool
	// listed says the input just read was a list of devices, which adds
	// nothing to the device named after it.
	listed bool
	// The list of devices the input being read may be, one key a text
	// line (notDevice for its header and blank lines), until a line says
	// otherwise (notList); listResults counts its <result> values, which
	// are counted as they are read.
	list        []uint8
	listResults int
	notList     bool
	// versions holds each ctrld version read once, checked.
	versions map[string]string
	csvRows  int // rows of inventory exports read (ReadCSV)

	// The input being read: its device, its newest outcome so far, and
	// what its lines said last about the time and ctrld's version.
	dev       *device
	best      obs
	haveBest  bool
	gen       int
	seq       int
	streak    int32     // the input's trailing outcomes that need attention
	streakAt  mark      // the first of them
	textLines int       // lines of text read
	bare      bareWords // bare words read, counted when the input ends
	bareMixed bool      // a line that is neither: bare words do not count
	lastAt    int64
	dated     bool
	lineDated bool // the line being read starts with its date
	version   string
	ctx       context.Context

	raw   *bufio.Reader // the input as given
	gz    *gzip.Reader
	text  *bufio.Reader // decompressed
	lines *bufio.Reader // what lines are read from

	// The JSON region being read, its scanner state, and the outcomes of
	// the records in it, kept only if the region holds at least one record.
	region    []byte
	inRegion  bool
	depth     int
	inString  bool
	escaped   bool
	regionObs []obs
	objStart  int

	// work counts the bytes the scanners examine, so a test can show that
	// the cost of reading grows with the input and not faster.
	work    int64
	measure bool
}

// NewCounter returns an empty counter that counts every outcome it reads.
func NewCounter() *Counter {
	return &Counter{
		counts:   make([]int, numKeys),
		days:     map[int64]*dayCounts{},
		devices:  map[string]*device{},
		versions: map[string]string{},
		raw:      bufio.NewReaderSize(nil, 32<<10),
		text:     bufio.NewReaderSize(nil, MaxLine),
		lines:    bufio.NewReaderSize(nil, MaxLine),
		region:   make([]byte, 0, MaxObject),
		ctx:      context.Background(),
	}
}

// NewLatestCounter returns an empty counter that counts only the newest
// outcome of each device. A device's --log file or install.log holds every
// run it ever made, and an MDM that re-runs the install every 15 minutes
// writes a failure each time: counting them all reports one broken device
// as a hundred. Counting devices, each in the state its last run left it,
// answers how the fleet is.
func NewLatestCounter() *Counter {
	c := NewCounter()
	c.latest = true
	return c
}

// SetContext makes reading stop with ctx's error once ctx is done.
func (c *Counter) SetContext(ctx context.Context) { c.ctx = ctx }

// Read counts the outcomes in one input that is a device of its own, with
// no name. See ReadDevice.
func (c *Counter) Read(r io.Reader) error {
	c.anon++
	return c.readOwn(fmt.Sprintf("(input %d)", c.anon), 0, r)
}

// readOwn is ReadDevice for an input that is a device of its own, which
// may instead list devices, one value a line (see flushBare).
func (c *Counter) readOwn(name string, gen int, r io.Reader) error {
	c.own = true
	defer func() { c.own = false }()
	return c.ReadDevice(name, gen, r)
}

// ReadDevice counts the outcomes in one input of the device called name.
// gen is the input's rotation generation (see rotationGen). An error means
// the input could not be read to the end; for a latest counter it then
// adds nothing to its device, whose newest outcome may be in the part that
// could not be read. A counter of every outcome keeps what it counted.
func (c *Counter) ReadDevice(name string, gen int, r io.Reader) error {
	c.stats.Inputs++
	_, existed := c.devices[name]
	d := c.device(name)
	c.listed, c.list, c.listResults, c.notList = false, c.list[:0], 0, false
	c.dev, c.gen, c.seq, c.streak = d, gen, 0, 0
	c.haveBest, c.best = false, obs{}
	c.dated, c.lastAt, c.version = false, 0, ""
	err := c.read(r)
	if err != nil {
		c.resetBare()
		c.stats.Unreadable++
		return err
	}
	c.flushBare()
	if c.listed && !existed {
		delete(c.devices, name)
	}
	if !c.haveBest {
		return nil
	}
	if !d.seen || newer(c.best.mark, d.last.mark) {
		d.last, d.seen = c.best, true
	}
	d.spans = append(d.spans, span{last: c.best.mark, first: c.streakAt, streak: c.streak, whole: int(c.streak) == c.seq})
	return nil
}

// device returns the device called name, adding it when it is new. The
// same name under two arguments is one device.
func (c *Counter) device(name string) *device {
	d, ok := c.devices[name]
	if !ok {
		d = &device{name: name}
		c.devices[name] = d
	}
	return d
}

// Unreadable records an input that could not be opened.
func (c *Counter) Unreadable() { c.stats.Unreadable++ }

// emit records one outcome of the current input.
func (c *Counter) emit(o obs) {
	o.gen, o.input, o.seq = int32(c.gen), int32(c.stats.Inputs), int32(c.seq)
	c.seq++
	if !c.latest {
		c.counts[o.key]++
	}
	// The chart of days draws every run read, with or without --latest:
	// each device's last outcome alone would put a fleet that has been
	// healthy for months on the day each device last changed.
	c.addDay(o)
	if valueOf(o.key).Bucket() == fleetreport.BucketAttention {
		if c.streak == 0 {
			c.streakAt = o.mark
		}
		c.streak++
	} else {
		c.streak = 0
	}
	// Within one input the last outcome is the input's: a log is written
	// in the order its runs ended, whatever the clock said while they ran,
	// and a line dated while the clock ran ahead must not outrank every
	// line after it. Dates rank only the inputs of a device (see newer).
	c.best, c.haveBest = o, true
}

// emitText records an outcome read from a line of text, dated by the
// line or, failing that, by the last date its input showed.
func (c *Counter) emitText(k key, action string) {
	c.emit(obs{mark: mark{key: k, at: c.lastAt, dated: c.dated, own: c.lineDated}, version: c.version, action: action})
}

func (c *Counter) read(r io.Reader) error {
	c.raw.Reset(ctxReader{c.ctx, r})
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
	// The one decoder of Windows text (parse.NewTextReader): a byte order
	// mark is honoured, UTF-16 keeps its lines, ASCII and nothing else.
	if dec := parse.NewTextReader(c.text); dec != io.Reader(c.text) {
		c.lines.Reset(dec)
		lines = c.lines
	}
	return c.readLines(lines)
}

// ctxReader ends a read once its context is done, so a signal stops a
// summary of a large input between two reads.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (r ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

func (c *Counter) readLines(br *bufio.Reader) error {
	defer c.endRegion()
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			c.stats.LongLines++
			// In a list of devices it is no device, and keeps the lines
			// after it numbered as the file numbers them.
			c.listLine(notDevice)
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
	c.work += int64(len(line))
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
	if len(c.regionObs) > 0 {
		for _, o := range c.regionObs {
			if o.dated {
				c.lastAt, c.dated = o.at, true
			}
			c.version = o.version
			c.emit(o)
		}
	} else {
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
	c.regionObs = c.regionObs[:0]
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

var resultField = []byte(`"result"`)

// object evaluates one JSON object of a region.
func (c *Counter) object(b []byte) {
	c.work += int64(len(b))
	// Every record has a result; most JSON in a log is something else,
	// and decoding it all would be the slowest part of a summary.
	if !bytes.Contains(b, resultField) {
		return
	}
	r, err := record.DecodeUnchecked(b)
	if err != nil || r.Version != 1 {
		return
	}
	o := obs{mark: mark{key: noKey, record: true}, action: r.Action}
	if t, err := time.Parse(time.RFC3339, r.Timestamp); err == nil && plausible(t.Unix()) {
		o.at, o.dated, o.own = t.Unix(), true, true
	}
	if r.CtrldVersion != nil && parse.IsDisplayVersion(*r.CtrldVersion) {
		o.version = *r.CtrldVersion
	}
	switch {
	case r.Result == record.ResultRunning:
		o.key, o.action = keyRunning, ""
	case r.Result == r.Code && (r.Code == states.NeverRun || r.Code == states.InvalidRecord):
		// status --format json where there is no outcome.
		o.key, o.action = stateKey(r.Code), ""
	default:
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
		o.key = codeIndex[code.Name]
		if code.IsOK() && r.Action == outcome.ActionUninstalled.String() {
			o.key = keyUninstalled
		}
	}
	c.regionObs = append(c.regionObs, o)
}

// bareWords are the bare words of the input being read, as much of them
// as counting them takes: how many of each, the last, and the trailing
// streak of those that need attention. An export of a million lines is
// held in a few hundred bytes (and, while it may be a list of devices, in
// a byte a line: Counter.list).
type bareWords struct {
	counts    []int // by key
	n         int
	last      key
	streak    int
	streakKey key
}

// notDevice marks a line of a list that names no device: its header, a
// blank line.
const notDevice = 0xff

// deviceList is an input that lists devices, one value a line, as an
// inventory export of a custom attribute or a script's output does: the
// key of each text line, or notDevice.
type deviceList struct {
	name  string
	lines []uint8
}

func init() {
	if numKeys >= notDevice {
		panic("fleet: too many codes and states for a byte a line")
	}
}

// text1 reads one line of text: a bare word (see bareWord), kept until the
// input ends, or the outcomes in it.
//
// An export lists one value a line, perhaps under a column header; a line
// that is a code alone is also the heading explain prints, and the first
// line of many other outputs. So bare words count only in an input whose
// every other line, after its first, is blank or holds an outcome; one
// line of anything else (explain's "stage:" line, a log's progress) makes
// them text.
func (c *Counter) text1(line []byte) {
	c.textLines++
	k, n, ok := bareWord(line)
	c.work += int64(n)
	if ok {
		if !c.bareMixed {
			c.addBare(k)
		}
		c.listLine(uint8(k))
		return
	}
	seq := c.seq
	c.textOutcomes(line)
	blank := len(bytes.TrimSpace(line)) == 0
	switch {
	case c.seq == seq+1 && loneResult(line):
		c.listResults++
		c.listLine(uint8(c.best.key))
	case c.seq == seq && (blank || c.textLines == 1):
		c.listLine(notDevice)
	default:
		c.notList, c.list = true, nil
	}
	if c.seq == seq && c.textLines > 1 && !blank {
		c.resetBare()
		c.bareMixed = true
	}
}

// listLine adds a line to the list of devices the input may be.
func (c *Counter) listLine(k uint8) {
	if c.own && !c.notList {
		c.list = append(c.list, k)
	}
}

// loneResult reports whether line is a <result> value and nothing else,
// with the blanks, carriage return and quotes an export leaves around it.
func loneResult(line []byte) bool {
	t := bytes.Trim(line, " \t\r\n\"")
	return bytes.HasPrefix(t, anchors[anchorResult]) && bytes.HasSuffix(t, resultClose) && bytes.Count(t, anchors[anchorResult]) == 1
}

func (c *Counter) addBare(k key) {
	b := &c.bare
	if b.counts == nil {
		b.counts = make([]int, numKeys)
	}
	b.counts[k]++
	b.n++
	b.last = k
	if valueOf(k).Bucket() == fleetreport.BucketAttention {
		if b.streak == 0 {
			b.streakKey = k
		}
		b.streak++
	} else {
		b.streak = 0
	}
}

func (c *Counter) resetBare() {
	if c.bare.n > 0 {
		clear(c.bare.counts)
	}
	c.bare.n, c.bare.streak = 0, 0
	c.bareMixed, c.textLines = false, 0
}

// flushBare counts the bare words of an input that has ended, when they
// count (see text1), as if each had been read at the end of the input,
// undated: what emit would do with each, at once.
func (c *Counter) flushBare() {
	b := &c.bare
	// Two or more bare words or <result> values, and no other outcome, in
	// a device's own input: an export of one device a line (Intune's
	// custom attribute, a Remediation's output column), not one device's
	// history, which no tool writes that way. Its <result> values are
	// counted already; the device named after the input gets nothing.
	if c.own && !c.notList && b.n+c.listResults >= 2 && c.seq == c.listResults {
		c.lists = append(c.lists, deviceList{name: c.dev.name, lines: c.list})
		c.list = nil
		c.listed, c.haveBest = true, false
	}
	if c.bareMixed || b.n == 0 {
		c.resetBare()
		return
	}
	for k, n := range b.counts {
		if n == 0 {
			continue
		}
		if !c.latest {
			c.counts[k] += n
		}
		c.runs += n
		c.undated += n
	}
	if c.listed {
		c.resetBare()
		return
	}
	at := func(seq int) mark {
		return mark{gen: int32(c.gen), input: int32(c.stats.Inputs), seq: int32(seq)}
	}
	first := c.seq
	c.seq += b.n
	switch {
	case b.streak == b.n:
		// Every bare word needs attention: the input's streak goes on.
		if c.streak == 0 {
			c.streakAt = at(first)
			c.streakAt.key = b.streakKey
		}
		c.streak += int32(b.n)
	default:
		c.streak = int32(b.streak)
		c.streakAt = at(c.seq - b.streak)
		c.streakAt.key = b.streakKey
	}
	last := at(c.seq - 1)
	last.key = b.last
	c.best, c.haveBest = obs{mark: last}, true
	c.resetBare()
}

// textOutcomes counts the outcomes in one line of text, in the order they appear
// in it, so that the last of a pasted line is the last counted.
//
// It finds the three texts every outcome starts with (see anchors), each
// searched for again only once the scan has passed its last match, so every
// byte of the line is examined a bounded number of times: a line packed
// with near misses costs what a plain line of its length does.
func (c *Counter) textOutcomes(line []byte) {
	c.lineDated = false
	if at, ok := lineTime(line); ok {
		c.lastAt, c.dated, c.lineDated = at, true, true
	}
	var next [len(anchors)]int
	for i := range next {
		next[i] = -2 // not searched yet
	}
	for pos := 0; ; {
		first, which := -1, -1
		for i, a := range anchors {
			if next[i] == -2 || next[i] >= 0 && next[i] < pos {
				j := bytes.Index(line[pos:], a)
				if j < 0 {
					next[i] = -1
					c.work += int64(len(line) - pos)
				} else {
					next[i] = pos + j
					c.work += int64(j + len(a))
				}
			}
			if next[i] >= 0 && (first < 0 || next[i] < first) {
				first, which = next[i], i
			}
		}
		if first < 0 {
			return
		}
		pos = first + len(anchors[which])
		rest := line[pos:]
		switch which {
		case anchorFailed:
			verb, ok := failureVerb(line[:first])
			if !ok {
				continue
			}
			c.measureGrammar(rest)
			if code, _, ok := codes.ParseIdentifier(rest); ok {
				action := ""
				if verb == codes.VerbUninstall {
					action = outcome.ActionUninstalled.String()
				}
				c.emitText(codeIndex[code.Name], action)
			}
		case anchorPrefix:
			pos += c.prefixed(rest)
		case anchorResult:
			name, after := codes.CutName(rest)
			c.work += int64(len(name))
			if !bytes.HasPrefix(after, resultClose) {
				continue
			}
			if k, ok := keyOfWord(name); ok {
				c.emitText(k, "")
			}
		}
	}
}

// bareWord reads a line that is nothing but a registered code or a state
// word, as an inventory export lists an attribute's or a script's value one
// a line (an Intune custom attribute, a Jamf export without its <result>
// tags), with the blanks, carriage return and double quotes such an export
// leaves around it. n is how many bytes it examined. The whole line must be
// the word: a word inside other text is not an outcome.
func bareWord(line []byte) (k key, n int, ok bool) {
	i, j := 0, len(line)
	for i < j && (line[i] == ' ' || line[i] == '\t' || line[i] == '"') {
		i++
	}
	if i == j || line[i] < 'A' || line[i] > 'Z' {
		return noKey, i + 1, false
	}
	for j > i && (line[j-1] == ' ' || line[j-1] == '\t' || line[j-1] == '\r' || line[j-1] == '\n' || line[j-1] == '"') {
		j--
	}
	w := line[i:j]
	if len(w) > 64 {
		return noKey, i + 65, false
	}
	for _, b := range w {
		if !(b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_') {
			return noKey, len(line), false
		}
	}
	k, ok = keyOfWord(w)
	return k, len(line), ok
}

// failureVerb reports which outcome command's verb ends before, the text
// in front of " failed: ".
func failureVerb(before []byte) (string, bool) {
	for _, v := range failureVerbs {
		if bytes.HasSuffix(before, []byte(v)) {
			return v, true
		}
	}
	return "", false
}

// prefixed reads what follows "ctrld-install: " and returns how much of
// rest it consumed.
func (c *Counter) prefixed(rest []byte) int {
	if len(rest) == 0 {
		return 0
	}
	for _, p := range prefixedLines {
		if p.text[0] != rest[0] || !bytes.HasPrefix(rest, p.text) {
			continue
		}
		c.work += int64(len(p.text))
		switch {
		case p.version:
			c.readVersion(rest[len(p.text):])
		case p.key == keyUninstalled:
			c.version = ""
			c.emitText(p.key, p.action)
		default:
			c.emitText(p.key, p.action)
		}
		return len(p.text)
	}
	return 0
}

// readVersion reads the ctrld version a "running ctrld <command>" line
// names: "(ctrld 1.5.0, ..." or "(ctrld version unknown, ...", and for a
// restart the new version first. Only a version written as
// parse.DisplayVersion writes it is kept.
func (c *Counter) readVersion(b []byte) {
	i := bytes.IndexByte(b[:min(len(b), 16)], ' ')
	if i < 0 {
		return
	}
	b, ok := bytes.CutPrefix(b[i:], []byte(" (ctrld "))
	if !ok {
		return
	}
	end := bytes.IndexAny(b[:min(len(b), 64)], ", )")
	if end <= 0 {
		return
	}
	c.work += int64(end)
	v := b[:end]
	if string(v) == c.version {
		// Each run of a log names the version again; parsing it each
		// time was a fifth of what a large fleet's summary allocated.
		return
	}
	if string(v) == "version" {
		c.version = ""
	} else if sv, ok := c.versions[string(v)]; ok {
		c.version = sv
	} else if sv := string(v); parse.IsDisplayVersion(sv) {
		// One string per version, shared by every device that has it.
		if len(c.versions) < 1024 {
			c.versions[sv] = sv
		}
		c.version = sv
	}
}

// measureGrammar adds to work what the identifier grammar can examine
// after a marker: at most the run of bytes it is written in. Only tests
// that count work ask for it.
func (c *Counter) measureGrammar(rest []byte) {
	if !c.measure {
		return
	}
	n := 0
	for n < len(rest) && grammarByte(rest[n]) {
		n++
	}
	c.work += int64(n + 1)
}

func grammarByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '=' || b == ' ' || b == '(' || b == ')'
}

// lineTime reads the date a line starts with: RFC 3339, as --log writes
// it ("2026-11-29T10:14:03Z "), or as macOS's install.log writes it
// ("2026-11-29 10:14:03+01 "). A date without a zone is taken as UTC.
func lineTime(b []byte) (int64, bool) {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != ' ') || b[13] != ':' || b[16] != ':' {
		return 0, false
	}
	num := func(i, n int) (int, bool) {
		v := 0
		for _, d := range b[i : i+n] {
			if d < '0' || d > '9' {
				return 0, false
			}
			v = v*10 + int(d-'0')
		}
		return v, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 2)
	d, ok3 := num(8, 2)
	h, ok4 := num(11, 2)
	mi, ok5 := num(14, 2)
	s, ok6 := num(17, 2)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60 {
		return 0, false
	}
	i := 19
	if i < len(b) && b[i] == '.' {
		i++
		for i < len(b) && i < 40 && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	}
	offset := 0
	switch {
	case i < len(b) && b[i] == 'Z':
		i++
	case i+3 <= len(b) && (b[i] == '+' || b[i] == '-'):
		oh, ok := num(i+1, 2)
		if !ok || oh > 14 {
			return 0, false
		}
		sign := 1
		if b[i] == '-' {
			sign = -1
		}
		i += 3
		om := 0
		if i < len(b) && b[i] == ':' {
			i++
		}
		if i+2 <= len(b) {
			if v, ok := num(i, 2); ok {
				om, i = v, i+2
			}
		}
		offset = sign * (oh*3600 + om*60)
	}
	if i < len(b) && b[i] != ' ' && b[i] != '\t' && b[i] != '\r' && b[i] != '\n' {
		return 0, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, s, 0, time.UTC).Unix() - int64(offset)
	return t, plausible(t)
}

// plausible bounds the dates a report keeps, so a forged record cannot
// make the report of days grow without limit.
func plausible(t int64) bool { return t >= minDate && t < maxDate }

var (
	minDate = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	maxDate = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
)
