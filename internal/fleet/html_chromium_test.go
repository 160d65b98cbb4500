package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/fleetreport"
)

// pdfPages counts the pages of a PDF Chromium printed.
func pdfPages(t *testing.T, pdf string) int {
	t.Helper()
	doc, err := os.ReadFile(pdf)
	if err != nil {
		t.Fatalf("no PDF: %v", err)
	}
	return len(regexp.MustCompile(`/Type\s*/Page[^s]`).FindAll(doc, -1))
}

var (
	// wordTokenRE finds what could be a code or state word in text.
	wordTokenRE = regexp.MustCompile(`[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+_?`)
	tagRE       = regexp.MustCompile(`<[^>]*>`)
)

// checkCodesWhole reads the printed PDF's text (pdftotext, from Debian's
// poppler-utils) and checks that every code or state word in it is one
// the page holds, whole: one wrapped, clipped at an edge or ended with an
// ellipsis is a word the page does not hold.
func checkCodesWhole(t *testing.T, page, pdf string) {
	t.Helper()
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		t.Fatalf("CTRLD_INSTALL_CHROMIUM_FULL is set but pdftotext is not installed (apt-get install poppler-utils): %v", err)
	}
	out, err := exec.Command(bin, "-enc", "UTF-8", pdf, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	text := string(out)
	whole := map[string]bool{}
	for _, w := range wordTokenRE.FindAllString(tagRE.ReplaceAllString(page, " "), -1) {
		whole[w] = true
	}
	seen := 0
	for _, w := range wordTokenRE.FindAllString(text, -1) {
		seen++
		if !whole[w] {
			t.Errorf("the printed page has %q, which is not a word of the page: a code cut mid-word", w)
		}
	}
	if seen == 0 {
		t.Errorf("the printed page's text has no code at all:\n%.1000s", out)
	}
}

// chromium runs Debian's headless Chromium on the page with no network:
// every background service off, a fresh profile, and names that resolve
// to nothing, so a request the page made could not succeed and is seen
// in the net log.
func chromium(t *testing.T, page string, args ...string) []byte {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("CTRLD_INSTALL_CHROMIUM_FULL is set but chromium is not installed (apt-get install chromium): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	full := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-extensions", "--no-first-run", "--no-default-browser-check",
		"--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
		"--user-data-dir=" + t.TempDir(),
	}, args...)
	cmd := exec.CommandContext(ctx, bin, append(full, "file://"+page)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.Bytes()
}

var (
	// externalRefRE finds what makes a page fetch: an attribute naming a
	// resource, a style that loads one, or an element that does.
	externalRefRE = regexp.MustCompile(`(?i)\s(src|srcset|href|xlink:href|action|formaction|poster|background|ping|manifest)\s*=|url\s*\(|@import|<(script|link|iframe|object|embed|img|video|audio|source|base)\b`)
)

// pageRequests lists the URLs a page asked for, from Chromium's net log:
// requests started on behalf of a document (an initiator, the page's
// own opaque "null" for a file) as opposed to the browser's own traffic
// (update checks, network time, sign-in), whose initiator is "not an
// origin" and which the flags above keep from reaching anything.
func pageRequests(t *testing.T, netLog string) []string {
	t.Helper()
	b, err := os.ReadFile(netLog)
	if err != nil {
		t.Fatalf("chromium wrote no net log: %v", err)
	}
	var log struct {
		Constants struct {
			LogEventTypes map[string]int `json:"logEventTypes"`
		} `json:"constants"`
		Events []struct {
			Type   int `json:"type"`
			Params struct {
				URL       string `json:"url"`
				Initiator string `json:"initiator"`
			} `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(b, &log); err != nil {
		t.Fatalf("the net log does not parse: %v", err)
	}
	start, ok := log.Constants.LogEventTypes["URL_REQUEST_START_JOB"]
	if !ok {
		t.Fatalf("the net log names no URL_REQUEST_START_JOB event")
	}
	var out []string
	for _, e := range log.Events {
		if e.Type == start && e.Params.URL != "" && e.Params.Initiator != "not an origin" {
			out = append(out, e.Params.URL)
		}
	}
	return out
}

// The HTML report of a 500-device fleet, rendered by a real browser with
// no network: its DOM's charts say what the JSON report says, it refers
// to nothing outside itself and asks for nothing (the net log shows no
// request but the page's own file), it draws a picture, and it prints on
// two A4 pages at most, with no code cut (read from the PDF's text with
// pdftotext); then the same for a fleet of 100,000 devices. Slow, and
// needs Chromium and poppler-utils: CI installs them and sets
// CTRLD_INSTALL_CHROMIUM_FULL=1.
func TestHTMLReportInHeadlessChromium(t *testing.T) {
	if os.Getenv("CTRLD_INSTALL_CHROMIUM_FULL") == "" {
		t.Skip("renders the HTML report in headless Chromium; CI installs chromium and sets CTRLD_INSTALL_CHROMIUM_FULL=1")
	}
	dir := t.TempDir()
	makeFleetDevices := filepath.Join(dir, "fleet")
	makeFleet(t, makeFleetDevices, 500)
	c := NewLatestCounter()
	if err := c.ReadPath(makeFleetDevices); err != nil {
		t.Fatal(err)
	}
	s := c.Summary()
	s.ListDevices = true
	page := filepath.Join(dir, "report.html")
	if err := os.WriteFile(page, []byte(format(t, s, "html")), 0o644); err != nil {
		t.Fatal(err)
	}
	j := parseJSONReport(t, format(t, s, "json"))

	netLog := filepath.Join(dir, "net.json")
	dom := string(chromium(t, page, "--dump-dom", "--log-net-log="+netLog))
	if !strings.Contains(dom, `http-equiv="Content-Security-Policy" content="`+fleetreport.CSP+`"`) {
		t.Errorf("the rendered DOM has no Content-Security-Policy %q", fleetreport.CSP)
	}
	chart := parseHTMLChart(t, dom)
	if len(chart.counts) == 0 || len(chart.days) == 0 {
		t.Fatalf("the rendered DOM has no charts (%d bars, %d days):\n%.2000s", len(chart.counts), len(chart.days), dom)
	}
	checkChartAgainstJSON(t, chart, j)
	if len(chart.devices) != 500 {
		t.Errorf("the rendered DOM lists %d devices, want 500", len(chart.devices))
	}
	if m := externalRefRE.FindAllString(dom, 5); len(m) > 0 {
		t.Errorf("the rendered DOM refers to resources: %q", m)
	}
	if asked := pageRequests(t, netLog); len(asked) > 0 {
		t.Errorf("the page asked for %q", asked)
	}
	// The same check on a page that does fetch finds it, so the net log
	// is read as it should be.
	leaky := filepath.Join(dir, "leaky.html")
	os.WriteFile(leaky, []byte(`<!DOCTYPE html><html><body><img src="http://fetched.invalid/x.png"></body></html>`), 0o644)
	leakyLog := filepath.Join(dir, "leaky-net.json")
	chromium(t, leaky, "--dump-dom", "--log-net-log="+leakyLog)
	if asked := pageRequests(t, leakyLog); !slices.Contains(asked, "http://fetched.invalid/x.png") {
		t.Errorf("a page with an external image: the net log shows %q, want its request", asked)
	}

	shot := filepath.Join(dir, "report.png")
	chromium(t, page, "--window-size=1100,1800", "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	// The OK bar's green is drawn: the charts were rendered, not just text.
	green := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 < 0x50 && g>>8 > 0x70 && g>>8 < 0x90 && bl>>8 < 0x50 {
				green++
			}
		}
	}
	if green < 500 {
		t.Errorf("the screenshot has %d pixels of the OK bars' green, want a chart's worth", green)
	}

	pdf := filepath.Join(dir, "report.pdf")
	chromium(t, page, "--no-pdf-header-footer", "--print-to-pdf="+pdf)
	pages := pdfPages(t, pdf)
	if pages < 1 || pages > 2 {
		t.Errorf("the report prints on %d A4 pages, want one or two", pages)
	}
	checkCodesWhole(t, format(t, s, "html"), pdf)
	t.Run("100000 devices", checkFleetOf100000)
	t.Logf("rendered: %d bars, %d days, %d devices; screenshot %v; prints on %d pages", len(chart.counts), len(chart.days), len(chart.devices), b.Size(), pages)
	if keep := os.Getenv("CTRLD_INSTALL_CHROMIUM_KEEP"); keep != "" {
		for _, p := range []string{page, shot, pdf} {
			if data, err := os.ReadFile(p); err == nil {
				os.WriteFile(filepath.Join(keep, filepath.Base(p)), data, 0o644)
			}
		}
	}
}

// checkFleetOf100000 renders the page of a 100,000-device fleet in
// headless Chromium: under 1 MiB, printed on at most two A4 pages with no
// code cut, and the devices that need attention listed by code as the DOM
// shows them. How long the render takes is the bench's figure
// (bench/README.md), not checked here.
func checkFleetOf100000(t *testing.T) {
	dir := t.TempDir()
	s := syntheticFleet(t, 100_000).Summary()
	page := format(t, s, "html")
	if len(page) >= 1<<20 {
		t.Errorf("the page is %d bytes, want under 1 MiB", len(page))
	}
	file := filepath.Join(dir, "fleet-100000.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	dom := string(chromium(t, file, "--dump-dom"))
	took := time.Since(t0)
	checkAttention(t, dom, s)
	checkChartAgainstJSON(t, parseHTMLChart(t, dom), parseJSONReport(t, format(t, s, "json")))

	pdf := filepath.Join(dir, "fleet-100000.pdf")
	t0 = time.Now()
	chromium(t, file, "--no-pdf-header-footer", "--print-to-pdf="+pdf)
	printed := time.Since(t0)
	if n := pdfPages(t, pdf); n < 1 || n > 2 {
		t.Errorf("the report of 100,000 devices prints on %d A4 pages, want one or two", n)
	}
	checkCodesWhole(t, page, pdf)
	t.Logf("%d bytes, %d need attention; chromium: DOM in %v, PDF in %v (with its start)", len(page), s.Headline[fleetreport.BucketAttention], took.Round(time.Millisecond), printed.Round(time.Millisecond))
	if keep := os.Getenv("CTRLD_INSTALL_CHROMIUM_KEEP"); keep != "" {
		for _, p := range []string{file, pdf} {
			if data, err := os.ReadFile(p); err == nil {
				os.WriteFile(filepath.Join(keep, filepath.Base(p)), data, 0o644)
			}
		}
	}
}
