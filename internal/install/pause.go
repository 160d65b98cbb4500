package install

import (
	"os"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/store"
)

// A request the API or the device refused for good is not sent again
// unchanged at every check-in: a fleet of thousands in such a loop would
// send thousands of refused requests an hour. It is sent again after a
// pause that starts at firstPause and doubles after each refusal, up to
// maxPause; a run inside it changes nothing and ends with the earlier
// code. Another request, another ctrld build or --force try at once.
const (
	firstPause = 15 * time.Minute
	maxPause   = 24 * time.Hour
)

type pauseFile struct {
	Version  int              `json:"version"`
	Code     string           `json:"code"`
	Request  *store.KeyedHash `json:"request"`
	Size     int64            `json:"size"` // the ctrld binary it was refused with
	ModNS    int64            `json:"mod_ns"`
	Refusals int              `json:"refusals"`
	Next     int64            `json:"next"` // Unix seconds
}

// pauseAfter is the pause after the nth refusal in a row.
func pauseAfter(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	if n > 8 {
		return maxPause
	}
	return min(firstPause<<(n-1), maxPause)
}

// forGood reports whether a provisioning that ended with c would end the
// same way if sent again unchanged: the API's refusal of the token or the
// device, a configuration it cannot use, or a device whose deactivation
// PIN stops the change.
func forGood(c codes.Code) bool {
	return c.Class == codes.ClassFatal && c.Stage == codes.StageBootstrap || c.Name == codes.DeactivationPinRequired
}

func (r *run) readPause() (pauseFile, codes.Code, bool) {
	var p pauseFile
	if r.journal == nil || !store.Read(r.cfg.Home, store.Pause, &p) || p.Version != 1 || p.Refusals < 1 {
		return pauseFile{}, codes.Code{}, false
	}
	c, ok := codes.Lookup(p.Code)
	if !ok || !forGood(c) {
		return pauseFile{}, codes.Code{}, false
	}
	return p, c, true
}

// sameBuild reports whether the ctrld binary is the file p was refused
// with, by size and time, without reading it.
func (r *run) sameBuild(p pauseFile) bool {
	fi, err := os.Stat(r.cfg.Ctrld)
	return err == nil && fi.Size() == p.Size && fi.ModTime().UnixNano() == p.ModNS
}

// paused is the earlier code and when the request may be sent again, when
// this request, with this build, is inside its pause.
func (r *run) paused(s Secret) (codes.Code, time.Time, bool) {
	p, c, ok := r.readPause()
	if !ok || !s.Given() || r.cfg.Force || !r.sameBuild(p) || !p.Request.Matches(requestText(s, r.cfg.Extra)) {
		return codes.Code{}, time.Time{}, false
	}
	next := time.Unix(p.Next, 0)
	if !r.deps.Now().Before(next) {
		return codes.Code{}, time.Time{}, false
	}
	return c, next, true
}

// notePause keeps what the provisioning o ended with for the next run:
// a refusal for good starts or lengthens the pause; anything else that
// sent the request ends it. It returns when the request may be sent again.
func (r *run) notePause(o outcome.Outcome, s Secret) time.Time {
	if r.journal == nil || o.Command != outcome.Install || o.DryRun {
		return time.Time{}
	}
	if !r.nextTry.IsZero() {
		return r.nextTry // this run was the pause
	}
	if o.Action != outcome.ActionProvisioned || !s.Given() {
		return time.Time{}
	}
	if !forGood(o.Code) {
		_ = store.Remove(r.cfg.Home, store.Pause)
		return time.Time{}
	}
	p, _, ok := r.readPause()
	if !ok || !p.Request.Matches(requestText(s, r.cfg.Extra)) || !r.sameBuild(p) || p.Code != o.Code.Name {
		h, err := store.NewKeyedHash(requestText(s, r.cfg.Extra))
		if err != nil {
			return time.Time{}
		}
		p = pauseFile{Version: 1, Code: o.Code.Name, Request: h}
		if fi, err := os.Stat(r.cfg.Ctrld); err == nil {
			p.Size, p.ModNS = fi.Size(), fi.ModTime().UnixNano()
		}
	}
	p.Refusals++
	next := r.deps.Now().Add(pauseAfter(p.Refusals)).Truncate(time.Second)
	p.Next = next.Unix()
	if store.Write(r.cfg.Home, store.Pause, p) != nil {
		return time.Time{}
	}
	return next
}
