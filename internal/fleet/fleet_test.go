package fleet

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/parse"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
)

// canary stands for a provisioning token in input: no report may repeat it.
const canary = "CANARYTOKEN0123456789abcdef"

// capitalize is the markdown report's headline sentence as it starts.
func capitalize(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// fleetDevice is one device of a generated fleet and the row a report
// must give it.
type fleetDevice struct {
	name    string
	want    string // the code's name or the state's label
	when    string // RFC 3339, "" when nothing dated
	version string
	action  string
	kind    string
}

// run is one ctrld-install run in a generated fleet.
type run struct {
	end     time.Time
	name    string // the code it ends with, or "" for an uninstall that succeeded
	version string
	action  outcome.Action
}

// logOf writes runs as --log does: a header, the progress line with the
// version, retries, the next step and the final line, each timestamped,
// with the kind of noise an exported log holds around them.
func logOf(runs []run) string {
	var b strings.Builder
	for _, r := range runs {
		start := r.end.Add(-20 * time.Second)
		at := func(t time.Time) string { return t.UTC().Format(time.RFC3339) + " " }
		cmd := "install"
		if r.action == outcome.ActionUninstalled {
			cmd = "uninstall"
		}
		fmt.Fprintf(&b, "%s%srun started: ctrld-install 0.2.0, command %s, exit profile jamf, pid 4242\n", at(start), report.Prefix, cmd)
		b.WriteString("Nov 29 10:14:03 mac installd[812]: ./postinstall: --cd-org " + canary + "\n")
		switch {
		case cmd == "uninstall":
			fmt.Fprintf(&b, "%s%srunning ctrld uninstall (ctrld %s, time left 2m0s)\n", at(start), report.Prefix, r.version)
		case r.action == outcome.ActionSkipped:
		case r.action == outcome.ActionUpgraded:
			fmt.Fprintf(&b, "%s%srunning ctrld restart (ctrld %s replaces 1.4.9, time left 5m0s)\n", at(start), report.Prefix, r.version)
		default:
			fmt.Fprintf(&b, "%s%srunning ctrld start (ctrld %s, attempt 1 of 3, time left 5m0s)\n", at(start), report.Prefix, r.version)
		}
		c := codes.Code{Name: codes.OK}
		if r.name != "" {
			c = codes.Must(r.name)
		}
		switch {
		case cmd == "uninstall" && c.IsOK():
			fmt.Fprintf(&b, "%s%s%s\n", at(r.end), report.Prefix, outcome.LineUninstalled)
		case cmd == "uninstall":
			fmt.Fprintf(&b, "%s%snext step: %s\n%s%s%s\n", at(r.end), report.Prefix, c.NextStep, at(r.end), report.Prefix, codes.FailureLine(codes.VerbUninstall, c))
		case c.IsOK():
			line := map[outcome.Action]string{outcome.ActionSkipped: outcome.LineSkipped, outcome.ActionUpgraded: outcome.LineUpgraded}[r.action]
			if line == "" {
				line = outcome.LineProvisioned
			}
			fmt.Fprintf(&b, "%s%s%s\n", at(r.end), report.Prefix, line)
		default:
			fmt.Fprintf(&b, "%s%snext step: %s\n%s%s%s\n", at(r.end), report.Prefix, c.NextStep, at(r.end), report.Prefix, codes.FailureLine(codes.VerbProvisioning, c))
		}
	}
	return b.String()
}

// recordOf is the outcome record a run leaves, as ctrld-install writes it.
func recordOf(t testing.TB, r run) string {
	c := codes.Must(codes.OK)
	if r.name != "" {
		c = codes.Must(r.name)
	}
	o := outcome.Outcome{Command: outcome.Install, Code: c, Source: outcome.SourcePostConditions, Action: r.action, Attempts: 1, CtrldVersion: parse.MustParseVersion(r.version)}
	if r.action == outcome.ActionUninstalled {
		o.Command = outcome.Uninstall
		if c.IsOK() {
			o.CtrldVersion = nil
		}
	}
	b, err := json.MarshalIndent(record.New(record.FromOutcome(o, "0.2.0"), r.end), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func gzipped(t testing.TB, s string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// makeFleet writes n device folders under dir the way a Support agent
// collects them: --log files with their rotated (plain and gzip) logs,
// outcome records alone and beside logs, status output of devices never
// run, uninstalled devices, runs in progress, captured stdout without
// dates, and empty folders. It returns each device's expected row.
func makeFleet(t testing.TB, dir string, n int) []fleetDevice {
	rng := rand.New(rand.NewPCG(22, uint64(n)))
	failures := []string{codes.ListenerBindFailed, codes.APIUnreachable, codes.ServiceSelfcheckFailed, codes.APIRejected, codes.CtrldTimeout, codes.DeactivationPinRequired}
	day0 := time.Date(2026, 11, 16, 9, 0, 0, 0, time.UTC)
	put := func(rel, content string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out []fleetDevice
	for i := range n {
		name := fmt.Sprintf("mac-%03d", i)
		end := day0.Add(time.Duration(i%14)*24*time.Hour + time.Duration(rng.IntN(8*3600))*time.Second)
		version := []string{"1.5.0", "1.4.9"}[rng.IntN(2)]
		last := run{end: end, version: version, action: outcome.ActionProvisioned}
		if rng.IntN(100) < 18 {
			last.name = failures[rng.IntN(len(failures))]
		}
		earlier := []run{
			{end: end.Add(-72 * time.Hour), name: failures[rng.IntN(len(failures))], version: "1.4.9", action: outcome.ActionProvisioned},
			{end: end.Add(-48 * time.Hour), name: failures[rng.IntN(len(failures))], version: "1.4.9", action: outcome.ActionProvisioned},
			{end: end.Add(-24 * time.Hour), version: "1.4.9", action: outcome.ActionSkipped},
		}
		d := fleetDevice{name: name, when: end.Format(time.RFC3339), version: version, action: "provisioned"}
		want := func(r run) {
			d.want = codes.OK
			if r.name != "" {
				d.want = r.name
			}
			d.action = r.action.String()
		}
		want(last)
		switch k := i % 20; {
		case k < 6: // one --log file with every run
			d.kind = "log"
			put(name+"/ctrld-install.log", logOf(append(earlier, last)))
		case k < 8: // rotated: the newest runs in the live log, older ones in .1 and .2.gz
			d.kind = "rotated"
			put(name+"/ctrld-install.log", logOf([]run{last}))
			put(name+"/ctrld-install.log.1", logOf(earlier[1:]))
			put(name+"/ctrld-install.log.2.gz", gzipped(t, logOf(earlier[:1])))
		case k == 8: // rotated and compressed, the newest run in the gzip
			d.kind = "gzip"
			put(name+"/ctrld-install.log", "")
			put(name+"/ctrld-install.log.1.gz", gzipped(t, logOf(append(earlier, last))))
		case k < 11: // the outcome record alone
			d.kind = "record"
			put(name+"/ctrld-install-result.json", recordOf(t, last))
		case k < 13: // the record beside the log of the same runs
			d.kind = "record and log"
			put(name+"/ctrld-install-result.json", recordOf(t, last))
			put(name+"/ctrld-install.log", logOf(append(earlier, last)))
		case k == 13: // a later run without --log: its record is newer than the log
			d.kind = "record newer"
			put(name+"/ctrld-install.log", logOf(earlier))
			put(name+"/ctrld-install-result.json", recordOf(t, last))
		case k == 14: // never run: status's output
			d.kind = "never run"
			if i%40 == 14 {
				put(name+"/status.json", `{"code":"NEVER_RUN","result":"NEVER_RUN","version":1}`+"\n")
			} else {
				put(name+"/ea.txt", "<result>NEVER_RUN</result>\n")
			}
			d.want, d.when, d.version, d.action = states.NeverRun, "", "", ""
		case k == 15: // uninstalled after it was provisioned
			d.kind = "uninstalled"
			u := run{end: end, version: version, action: outcome.ActionUninstalled}
			if i%40 == 15 {
				put(name+"/ctrld-install-result.json", recordOf(t, u))
			} else {
				put(name+"/ctrld-install.log", logOf(append(earlier, u)))
			}
			d.want, d.version, d.action = states.Uninstalled, "", "uninstalled"
		case k == 16: // a run in progress after a failure
			d.kind = "running"
			put(name+"/ctrld-install.log", logOf(earlier))
			b, err := json.Marshal(record.Running(record.CommandInstall, record.PhaseCtrldRunning, 4242, "0.2.0", &version, "", end))
			if err != nil {
				t.Fatal(err)
			}
			put(name+"/ctrld-install-result.json", string(b)+"\n")
			d.want, d.action = states.Running, ""
		case k == 17: // stdout captured by a script: no dates at all
			d.kind = "stdout"
			var b strings.Builder
			for _, r := range append(earlier, last) {
				for _, l := range strings.Split(strings.TrimSpace(logOf([]run{r})), "\n") {
					_, l, _ = strings.Cut(l, " ")
					b.WriteString(l + "\n")
				}
			}
			put(name+"/postinstall-stdout.txt", b.String())
			d.when = ""
			if last.name != "" {
				d.action = ""
			}
		case k == 18: // the state now, from the Jamf verify attribute
			d.kind = "not installed"
			put(name+"/ea-state.txt", "<result>NOT_INSTALLED</result>\n")
			d.want, d.when, d.version, d.action = states.NotInstalled, "", "", ""
		default: // a folder with nothing of ctrld-install in it
			d.kind = "empty"
			put(name+"/notes.txt", "nothing here "+canary+"\n")
			d.want, d.when, d.version, d.action = "(empty)", "", "", ""
		}
		// Text lines of a failed install carry no action; its record does.
		if (d.kind == "log" || d.kind == "rotated" || d.kind == "gzip" || d.kind == "stdout") && last.name != "" {
			d.action = ""
		}
		out = append(out, d)
	}
	return out
}
