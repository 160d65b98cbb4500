package bench

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
	"github.com/Control-D-Inc/ctrld-install/internal/outcome"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
)

// FleetStats is what WriteFleet wrote.
type FleetStats struct {
	Devices, Runs int
	Bytes         int64
}

// WriteFleet writes n device folders under dir as a Support agent
// collects them for `summarize --latest`: each device's --log file with 1
// to 12 runs a day apart (healthy ones "already provisioned", a quarter
// failing for their last few runs), and a few devices never run, removed,
// settled under another PIN or with a run in progress. Deterministic: the
// same n writes the same fleet.
func WriteFleet(dir string, n int) (FleetStats, error) {
	rng := rand.New(rand.NewPCG(28, 8))
	failing := []string{codes.ListenerBindFailed, codes.APIUnreachable, codes.ServiceSelfcheckFailed, codes.APIRejected,
		codes.ListenerConfiguredAddrUnavailable, codes.CtrldVersionUnsupported, codes.InstallerNotRoot, codes.ServiceNotRunning}
	day0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	var st FleetStats
	var b strings.Builder
	line := func(t time.Time, text string) {
		b.WriteString(t.Format(time.RFC3339) + " " + report.Prefix + text + "\n")
	}
	for i := range n {
		b.Reset()
		file := "ctrld-install.log"
		switch k := rng.IntN(100); {
		case k < 4:
			file = "ea.txt"
			b.WriteString("<result>NEVER_RUN</result>\n")
		case k < 6:
			line(day0, outcome.LineUninstalled)
			st.Runs++
		case k < 7:
			file = "ctrld-install-result.json"
			b.WriteString(`{"version":1,"result":"running","phase":"ctrld-running","pid":42,"timestamp":"2026-11-30T10:00:00Z"}` + "\n")
			st.Runs++
		default:
			runs := 1 + rng.IntN(12)
			fail := ""
			switch {
			case k < 30:
				fail = failing[rng.IntN(len(failing))]
			case k < 31:
				fail = codes.DeactivationPinRequired
			}
			start := day0.Add(time.Duration(rng.IntN(60*24)) * time.Hour)
			failFrom := rng.IntN(runs)
			for r := range runs {
				end := start.Add(time.Duration(r)*24*time.Hour + 20*time.Second)
				line(end.Add(-20*time.Second), "run started: ctrld-install 0.2.0, command install, exit profile jamf, pid 4242")
				line(end.Add(-19*time.Second), "running ctrld start (ctrld 1.5.0, attempt 1 of 3, time left 5m0s)")
				if fail != "" && r >= failFrom {
					c := codes.Must(fail)
					line(end, "next step: "+c.NextStep)
					line(end, codes.FailureLine(codes.VerbProvisioning, c))
				} else {
					line(end, outcome.LineSkipped)
				}
				st.Runs++
			}
		}
		dev := filepath.Join(dir, fmt.Sprintf("mac-%06d", i))
		if err := os.MkdirAll(dev, 0o755); err != nil {
			return st, err
		}
		if err := os.WriteFile(filepath.Join(dev, file), []byte(b.String()), 0o644); err != nil {
			return st, err
		}
		st.Devices++
		st.Bytes += int64(b.Len())
	}
	return st, nil
}
