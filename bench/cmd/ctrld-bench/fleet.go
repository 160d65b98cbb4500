//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/Control-D-Inc/ctrld-install/bench"
)

// fleetReport measures summarize on a generated fleet as a Support agent
// collects one (a folder per device, each with its --log file), its time
// and its own peak memory, and how long headless Chromium takes to render
// and to print the HTML page it writes.
func (e *env) fleetReport() ([]row, error) {
	n := e.cfg.fleetDevices
	dir := filepath.Join(e.work, "fleet")
	progress("writing a fleet of %d devices", n)
	st, err := bench.WriteFleet(dir, n)
	if err != nil {
		return nil, err
	}
	page := filepath.Join(e.work, "fleet.html")
	var took, floor []time.Duration
	var worst int64
	source := "VmHWM sampled every 2 ms"
	for range e.cfg.fleetRuns {
		// Side by side, in rotation: every file of the fleet read by find
		// and cat, which is what the file system costs before any counting.
		f := exec.Command("sh", "-c", `find "$1" -type f -exec cat {} + >/dev/null`, "sh", dir)
		t0 := time.Now()
		if err := f.Run(); err != nil {
			return nil, fmt.Errorf("find | cat: %w", err)
		}
		floor = append(floor, time.Since(t0))
		out, err := os.Create(page)
		if err != nil {
			return nil, err
		}
		cmd := exec.Command(e.installer, "summarize", "--latest", "--format", "html", dir)
		cmd.Env, cmd.Stdout = cleanEnv(), out
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		t0 = time.Now()
		if err := cmd.Start(); err != nil {
			out.Close()
			return nil, err
		}
		done := make(chan struct{})
		hwm := make(chan int64, 1)
		go func() { hwm <- pollHighWater(cmd.Process.Pid, done) }()
		err = cmd.Wait()
		took = append(took, time.Since(t0))
		close(done)
		peak := <-hwm
		out.Close()
		if err != nil {
			return nil, fmt.Errorf("summarize: %w\n%s", err, stderr.String())
		}
		if peak == 0 {
			peak, source = maxRSS(cmd.ProcessState), "wait4, an upper bound"
		}
		worst = max(worst, peak)
	}
	fi, err := os.Stat(page)
	if err != nil {
		return nil, err
	}
	med := bench.Median(took)
	label := fmt.Sprintf("%d devices", n)
	rows := []row{
		{
			figure:   "summarize --latest --format html, " + label + ": time",
			measured: fmt.Sprintf("%.2f s", med.Seconds()),
			budget:   "< 10 s",
			result:   verdict(med < 10*time.Second),
			detail: fmt.Sprintf("median of %d; every file read by find -exec cat, in rotation: %.2f s (%.1f×); %d runs in %.0f MB of --log files; the page %d KiB",
				len(took), bench.Median(floor).Seconds(), med.Seconds()/bench.Median(floor).Seconds(), st.Runs, float64(st.Bytes)/1e6, fi.Size()>>10),
		},
		{
			figure:   "summarize --latest --format html, " + label + ": memory",
			measured: mib(worst) + " peak RSS",
			budget:   "< 64 MiB",
			result:   verdict(worst < 64<<20),
			detail:   fmt.Sprintf("worst of %d; %s", len(took), source),
		},
	}
	pageRow := row{
		figure: "fleet report page, " + label + ": render",
		budget: "< 1 s",
	}
	bin, err := exec.LookPath("chromium")
	if err != nil {
		pageRow.result, pageRow.detail = "skipped", "chromium is not installed"
		return append(rows, pageRow), nil
	}
	var renders, prints, warms []time.Duration
	var last renderTiming
	for range e.cfg.fleetRuns {
		r, err := renderInChromium(bin, page, e.work)
		if err != nil {
			return nil, err
		}
		renders, prints, warms, last = append(renders, r.render()), append(prints, r.print), append(warms, r.warm), r
	}
	render := bench.Median(renders)
	pageRow.measured = ms(render)
	pageRow.result = verdict(render < time.Second && fi.Size() < 1<<20 && last.pages <= 2)
	paint := "no paint entry (headless)"
	if last.fcp > 0 {
		paint = "first contentful paint " + ms(last.fcp)
	}
	pageRow.detail = fmt.Sprintf("median of %d, each in a fresh Chromium after a warm-up page of a few lines (%s, median); the last: load event %s, %s, then a full layout %s; the page %d KiB, printed to PDF in %s (median) on %d A4 pages",
		len(renders), ms(bench.Median(warms)), ms(last.load), paint, ms(last.layout), fi.Size()>>10, ms(bench.Median(prints)), last.pages)
	return append(rows, pageRow), nil
}

// renderTiming is what Chromium reports of one page load.
type renderTiming struct {
	load, fcp, layout, print time.Duration
	warm                     time.Duration // the warm-up page's render
	pages                    int
}

// render is the time from navigation to a page laid out and painted: the
// load event or the first paint, whichever is later, and what a full
// layout still takes after it.
func (r renderTiming) render() time.Duration { return max(r.load, r.fcp) + r.layout }

var pdfPageRE = regexp.MustCompile(`/Type\s*/Page[^s]`)

// renderInChromium loads page in a fresh headless Chromium driven over
// its DevTools pipe (no network, no extension), reads the page's own
// timing, then prints it to PDF. The browser's start-up is not in the
// figures: they are taken inside the page.
func renderInChromium(bin, page, work string) (renderTiming, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	profile, err := os.MkdirTemp(work, "chromium-*")
	if err != nil {
		return renderTiming{}, err
	}
	defer os.RemoveAll(profile)
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		return renderTiming{}, err
	}
	respR, respW, err := os.Pipe()
	if err != nil {
		return renderTiming{}, err
	}
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps",
		"--disable-extensions", "--no-first-run", "--no-default-browser-check", "--host-resolver-rules=MAP * ~NOTFOUND",
		"--user-data-dir="+profile, "about:blank")
	cmd.ExtraFiles = []*os.File{cmdR, respW} // fds 3 and 4: what DevTools reads and writes
	cmd.Env = append(os.Environ(), "HOME="+profile)
	if err := cmd.Start(); err != nil {
		return renderTiming{}, err
	}
	cmdR.Close()
	respW.Close()
	defer func() {
		cmdW.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}()
	cdp := &devtools{w: cmdW, r: bufio.NewReaderSize(respR, 1<<20)}
	target, err := cdp.call("", "Target.createTarget", map[string]any{"url": "about:blank"})
	if err != nil {
		return renderTiming{}, err
	}
	var tid struct {
		TargetID string `json:"targetId"`
	}
	json.Unmarshal(target, &tid)
	attached, err := cdp.call("", "Target.attachToTarget", map[string]any{"targetId": tid.TargetID, "flatten": true})
	if err != nil {
		return renderTiming{}, err
	}
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(attached, &sess)
	s := sess.SessionID
	if _, err := cdp.call(s, "Page.enable", nil); err != nil {
		return renderTiming{}, err
	}
	// A fresh browser's first page pays for its fonts and renderer
	// (hundreds of milliseconds here, whatever the page); a reader's
	// browser has paid them. A page of a few lines in the report's fonts
	// goes first, and its load is shown beside the figure.
	warm := filepath.Join(work, "warm-up.html")
	if err := os.WriteFile(warm, []byte(warmUpPage), 0o644); err != nil {
		return renderTiming{}, err
	}
	var r renderTiming
	for _, p := range []string{warm, page} {
		if _, err := cdp.call(s, "Page.navigate", map[string]any{"url": "file://" + p}); err != nil {
			return renderTiming{}, err
		}
		if err := cdp.waitEvent("Page.loadEventFired"); err != nil {
			return renderTiming{}, err
		}
		t, err := cdp.timing(s)
		if err != nil {
			return renderTiming{}, err
		}
		if p == warm {
			r.warm = max(t.load, t.fcp) + t.layout
			continue
		}
		r.load, r.fcp, r.layout = t.load, t.fcp, t.layout
	}
	t0 := time.Now()
	printed, err := cdp.call(s, "Page.printToPDF", map[string]any{"preferCSSPageSize": true, "printBackground": true, "displayHeaderFooter": false})
	if err != nil {
		return renderTiming{}, err
	}
	r.print = time.Since(t0)
	var pdf struct {
		Data string `json:"data"`
	}
	json.Unmarshal(printed, &pdf)
	doc, err := base64.StdEncoding.DecodeString(pdf.Data)
	if err != nil {
		return renderTiming{}, err
	}
	r.pages = len(pdfPageRE.FindAll(doc, -1))
	return r, nil
}

// warmUpPage has the report's fonts: text, a code and an SVG label.
const warmUpPage = `<!DOCTYPE html><html><head><meta charset="utf-8"><style>body { font: 13px system-ui, sans-serif; } code { font: 12px ui-monospace, monospace; }</style></head>
<body><p>Warm-up <code>OK</code></p><svg width="100" height="20"><text x="0" y="14" style="font: 11px system-ui, sans-serif">1</text></svg></body></html>`

// timing reads the page's own timing, forcing a full layout.
func (d *devtools) timing(session string) (renderTiming, error) {
	// DevTools evaluates outside the page's Content-Security-Policy.
	res, err := d.call(session, "Runtime.evaluate", map[string]any{"returnByValue": true, "expression": `(() => {
		const t0 = performance.now();
		document.body.getBoundingClientRect();
		const layout = performance.now() - t0;
		const nav = performance.getEntriesByType("navigation")[0];
		const fcp = performance.getEntriesByName("first-contentful-paint")[0];
		return {load: nav.loadEventEnd, fcp: fcp ? fcp.startTime : 0, layout: layout};
	})()`})
	if err != nil {
		return renderTiming{}, err
	}
	var ev struct {
		Result struct {
			Value struct{ Load, FCP, Layout float64 } `json:"value"`
		} `json:"result"`
	}
	if err := json.Unmarshal(res, &ev); err != nil {
		return renderTiming{}, err
	}
	msf := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	return renderTiming{load: msf(ev.Result.Value.Load), fcp: msf(ev.Result.Value.FCP), layout: msf(ev.Result.Value.Layout)}, nil
}

// devtools speaks the DevTools protocol over --remote-debugging-pipe:
// JSON messages, each ended by a NUL byte.
type devtools struct {
	w      *os.File
	r      *bufio.Reader
	id     int
	events []string
}

type devtoolsMessage struct {
	ID     int             `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

func (d *devtools) call(session, method string, params any) (json.RawMessage, error) {
	d.id++
	msg := map[string]any{"id": d.id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	if _, err := d.w.Write(append(b, 0)); err != nil {
		return nil, err
	}
	for {
		m, err := d.read()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		if m.ID != d.id {
			if m.Method != "" {
				d.events = append(d.events, m.Method)
			}
			continue
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m.Result, nil
	}
}

func (d *devtools) waitEvent(method string) error {
	if i := slices.Index(d.events, method); i >= 0 {
		d.events = slices.Delete(d.events, i, i+1)
		return nil
	}
	for {
		m, err := d.read()
		if err != nil {
			return fmt.Errorf("waiting for %s: %w", method, err)
		}
		if m.Method == method {
			return nil
		}
	}
}

func (d *devtools) read() (devtoolsMessage, error) {
	b, err := d.r.ReadBytes(0)
	if err != nil {
		return devtoolsMessage{}, err
	}
	var m devtoolsMessage
	if err := json.Unmarshal(b[:len(b)-1], &m); err != nil {
		return devtoolsMessage{}, errors.New("not a DevTools message")
	}
	return m, nil
}
