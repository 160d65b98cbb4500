package parse

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

// ClassifyServiceLog reads a chunk of the ctrld daemon's own log and returns
// the specific cause of its last exit, if the chunk shows one. The caller
// bounds the chunk (the part written during this attempt, or its tail); it is
// read to the end.
//
// It exists because released ctrld often hides the cause from the start
// command: on 1.5.0 the daemon may die before it connects to the start
// command's log socket, and the start command then only reports its failed
// self-check. The daemon's stdout still has the fatal (SysV
// /var/log/ctrld.log, launchd's ctrld.out.log, the journal).
//
// Understood formats, one entry per line: the zerolog console writer (v1.x,
// coloured or not), the same behind a journal prefix ("Nov 30 14:46:03 host
// ctrld[123]: ..."), zap's console format (v2), and zerolog JSON lines
// (log_path, and ctrld.log of the 1.5.1 branch).
//
// Only lines that end the daemon count: a fatal, an error it exits after
// (invalid config), or the warning it logs before uninstalling itself
// because the device was deleted. The daemon
// exits at its first such line, so each one ends a lifetime; the service
// manager may start it again, and the last one is the state the start
// command gave up on. The result is a code only when that last exit has a
// specific cause: an unmapped fatal, or one whose code is only its stage's
// catch-all (BOOTSTRAP_FAILED, LISTENER_FAILED, SERVICE_FAILED), gives
// false, so the log never replaces what the start command's output said with
// something vaguer. Warnings the daemon recovers from (the retrying
// resolver request) never count: the log cannot tell whether a later try
// succeeded.
func ClassifyServiceLog(r io.Reader) (codes.Code, bool) {
	c := NewClassifier()
	last := vNone
	br := bufio.NewReaderSize(r, 4<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			// Keep the first maxLegacyLine bytes of a long line; drop the rest.
			if room := maxLegacyLine - len(line); room > 0 {
				line = append(line, chunk[:min(room, len(chunk))]...)
			}
			continue
		case err != nil && len(chunk) == 0 && len(line) == 0:
			return serviceLogResult(last)
		}
		if room := maxLegacyLine - len(line); room > 0 {
			line = append(line, chunk[:min(room, len(chunk))]...)
		}
		if v := c.serviceLogLine(line); v != vNone {
			last = v
		}
		clear(line)
		line = line[:0]
		if err != nil {
			return serviceLogResult(last)
		}
	}
}

func serviceLogResult(v verdict) (codes.Code, bool) {
	name := v.codeName()
	if name == "" {
		return codes.Code{}, false
	}
	code := codes.Must(name)
	if isCatchAll(code) {
		return codes.Code{}, false
	}
	return code, true
}

// isCatchAll reports whether c is its stage's own catch-all, the first exit
// status of the stage's range.
func isCatchAll(c codes.Code) bool {
	lo, _ := c.Stage.ExitRange()
	return c.Exit == lo
}

// serviceLogLine returns what one line of the daemon's log says about the
// daemon's exit: vNone when the daemon goes on after it, vUnmapped for an
// exit no registered code fits.
func (c *Classifier) serviceLogLine(line []byte) verdict {
	s, owned := line, false
	if hasANSIEscape(line) {
		if cap(c.buf) < len(line) {
			c.buf = make([]byte, 0, len(line))
		}
		c.buf = appendStripANSI(c.buf[:0], line)
		s, owned = c.buf, true
	}
	s = TrimLineEnd(s)
	var lvl logLevel
	var msg []byte
	if j := bytes.TrimLeft(s, " \t"); len(j) > 0 && j[0] == '{' {
		lvl, msg = c.jsonLogLine(j)
		owned = true
	} else {
		lvl, msg = splitLogLine(skipJournalPrefix(s))
	}
	if len(msg) == 0 || lvl == levelQuiet || lvl == levelUntagged {
		// Untagged text in the daemon's own log is a continuation of the
		// line before it, never a message of its own.
		return vNone
	}
	t, v := c.match(msg, lvl, owned)
	if lvl == levelFatal && (v == vNone || t != tierCause) {
		// The daemon ended on something that is not a catalogued cause.
		return vUnmapped
	}
	if t != tierCause {
		return vNone
	}
	return v
}

// jsonLogLine reads one zerolog JSON entry. The message and its error field
// are laid out in c.buf as the console writer would print them, so that the
// catalogue's rules read them the same way.
func (c *Classifier) jsonLogLine(line []byte) (logLevel, []byte) {
	var e struct {
		Level   string `json:"level"`
		Message string `json:"message"`
		Error   string `json:"error"`
	}
	if json.Unmarshal(line, &e) != nil {
		return levelQuiet, nil
	}
	lvl := levelQuiet
	switch e.Level {
	case "warn":
		lvl = levelWarn
	case "error":
		lvl = levelError
	case "fatal", "panic":
		lvl = levelFatal
	}
	c.buf = append(c.buf[:0], e.Message...)
	if e.Error != "" {
		// Quoted, as the console writer quotes a value with spaces: a
		// bare error=EOF then means the error was nothing but EOF.
		c.buf = append(c.buf, " error="...)
		c.buf = strconv.AppendQuote(c.buf, e.Error)
	}
	return lvl, c.buf
}

// skipJournalPrefix removes what journalctl's short format puts before a
// service's own output: "Nov 30 14:46:03 host ctrld[123]: ". The identifier
// must carry a process ID, so that a console line ("Nov 30 14:46:03.826 FTL
// listener.0 ...") is never mistaken for one.
func skipJournalPrefix(s []byte) []byte {
	n := stampLen(s)
	if n == 0 || n >= len(s) || s[n] != ' ' {
		return s
	}
	rest := s[n+1:]
	host := bytes.IndexByte(rest, ' ')
	if host <= 0 {
		return s
	}
	if _, known, _ := levelOf(rest[:host]); known {
		return s
	}
	ident := rest[host+1:]
	end := bytes.Index(ident, []byte("]: "))
	if end <= 0 {
		return s
	}
	open := bytes.IndexByte(ident[:end], '[')
	if open <= 0 || bytes.IndexByte(ident[:end], ' ') >= 0 {
		return s
	}
	for _, d := range ident[open+1 : end] {
		if !asciiDigit(d) {
			return s
		}
	}
	if open+1 == end {
		return s
	}
	return ident[end+len("]: "):]
}

// restartFailed is what ctrld 1.5.0's restart prints, and exits 0 after,
// when the service manager could not start the daemon again
// (captures/ctrld-1.5.0-restart-dying-build.txt).
var restartFailed = []byte("Service restart failed")

// RestartFailed reports whether a line of ctrld restart says the restart
// failed, whatever its exit status.
func RestartFailed(line []byte) bool {
	return bytes.Contains(StripANSI(line), restartFailed)
}
