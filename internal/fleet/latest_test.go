package fleet

import (
	"maps"
	"strings"
	"testing"

	"github.com/Control-D-Inc/ctrld-install/internal/codes"
)

// An input's outcome is its last one, whatever the dates of the lines
// before it; dates rank only a device's inputs (its logs and its record).
// A line written while the clock ran ahead does not outrank the lines
// after it, nor the device's record.
func TestSummarizeLatestWithinALogByPlace(t *testing.T) {
	t.Parallel()
	const (
		ahead = "2027-03-01T09:00:00Z " // the clock a week and months ahead
		early = "2026-08-18T10:00:00Z " // before recordJSON's 12:00
		late  = "2026-08-18T13:00:00Z " // after it
	)
	bind, timeout := codes.ListenerBindFailed, codes.CtrldTimeout
	type input struct {
		name string // the file's name under the device
		gen  int
		body string
	}
	for _, tc := range []struct {
		name   string
		inputs []input
		want   string
	}{
		{"a line dated ahead, then later lines",
			[]input{{"install.log", 0, ahead + timeoutLine + "\n" + early + successLine + "\n"}}, codes.OK},
		{"a line dated ahead, then later undated lines",
			[]input{{"install.log", 0, ahead + timeoutLine + "\n" + bindLine + "\n"}}, bind},
		{"a line dated ahead does not outrank the device's record",
			[]input{{"install.log", 0, ahead + timeoutLine + "\n" + early + successLine + "\n"}, {"ctrld-install-result.json", 0, recordJSON(t, bind)}}, bind},
		{"the record first, then the log",
			[]input{{"ctrld-install-result.json", 0, recordJSON(t, bind)}, {"install.log", 0, ahead + timeoutLine + "\n" + early + successLine + "\n"}}, bind},
		{"a log whose last outcome is newer than the record",
			[]input{{"ctrld-install-result.json", 0, recordJSON(t, bind)}, {"install.log", 0, early + timeoutLine + "\n" + late + successLine + "\n"}}, codes.OK},
		{"a log whose last line is the one dated ahead",
			[]input{{"install.log", 0, early + successLine + "\n" + ahead + timeoutLine + "\n"}, {"ctrld-install-result.json", 0, recordJSON(t, bind)}}, timeout},
		{"dates across a rotated log and the live one",
			[]input{{"install.log", 0, early + bindLine + "\n"}, {"install.log.1", 1, late + successLine + "\n" + ahead + "noise\n" + early + timeoutLine + "\n"}}, bind},
		{"an earlier record after a later one in one file",
			[]input{{"records.json", 0, runningJSON(t, 12, 30) + recordJSON(t, bind)}}, bind},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range []*Counter{NewLatestCounter(), NewCounter()} {
				for _, in := range tc.inputs {
					if err := c.ReadDevice("mac-17", in.gen, strings.NewReader(in.body)); err != nil {
						t.Fatalf("ReadDevice(%s): %v", in.name, err)
					}
				}
				s := c.Summary()
				if len(s.Devices) != 1 || s.Devices[0].Label() != tc.want {
					t.Errorf("latest=%v: devices %+v, want mac-17 at %s", s.Latest, s.Devices, tc.want)
				}
				if !s.Latest {
					continue
				}
				if got, want := counts(s), map[string]int{tc.want: 1}; !maps.Equal(got, want) {
					t.Errorf("counts = %v, want %v", got, want)
				}
			}
		})
	}
}
