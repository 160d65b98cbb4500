package fleet

import (
	"sort"
	"strconv"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/fleetreport"
	"github.com/Control-D-Inc/ctrld-install/internal/states"
)

// dayCounts are one day's outcomes by class, in the order of
// fleetreport.Classes.
type dayCounts [5]int

// valueOf is the report's value of k, pointing into the registries.
func valueOf(k key) fleetreport.Value {
	if k.isState() {
		return fleetreport.Value{State: &states.All[int(k)-numCodes]}
	}
	return fleetreport.Value{Code: &allCodes[k]}
}

func (c *Counter) addDay(o obs) {
	c.runs++
	if !o.dated {
		c.undated++
		return
	}
	day := o.at / 86400
	d := c.days[day]
	if d == nil {
		d = new(dayCounts)
		c.days[day] = d
	}
	d[fleetreport.ClassIndex(valueOf(o.key).Class())]++
}

// Summary returns the counts so far.
func (c *Counter) Summary() fleetreport.Summary {
	stats := c.stats
	stats.MaxLine = MaxLine
	s := fleetreport.Summary{Stats: stats, Latest: c.latest, Runs: c.runs, Undated: c.undated, Headline: map[fleetreport.Bucket]int{}}
	counts := c.counts
	days := c.days
	if c.latest {
		counts = make([]int, numKeys)
	}
	for _, b := range fleetreport.Buckets {
		s.Headline[b] = 0
	}
	names := make([]string, 0, len(c.devices))
	for n := range c.devices {
		names = append(names, n)
	}
	sort.Strings(names)
	lists := append([]deviceList(nil), c.lists...)
	sort.SliceStable(lists, func(i, j int) bool { return lists[i].name < lists[j].name })
	listed := 0
	for _, l := range lists {
		for _, k := range l.lines {
			if k != notDevice {
				listed++
			}
		}
	}
	s.Devices = make([]fleetreport.DeviceRow, 0, len(names)+listed)
	// The devices of a list, named by the list and the line, in the order
	// of its lines, after a device of the same name.
	addList := func(l deviceList) {
		base := fleetreport.SafeName(l.name)
		for i, k := range l.lines {
			if k == notDevice {
				continue
			}
			row := fleetreport.DeviceRow{Device: base + " line " + strconv.Itoa(i+1), Value: valueOf(key(k))}
			bucket := row.Bucket()
			s.Headline[bucket]++
			if bucket == fleetreport.BucketAttention {
				// The one run the list shows, undated.
				row.Failures = 1
			}
			s.Devices = append(s.Devices, row)
			if c.latest {
				counts[k]++
			}
		}
	}
	for _, n := range names {
		for len(lists) > 0 && lists[0].name < n {
			addList(lists[0])
			lists = lists[1:]
		}
		d := c.devices[n]
		o := d.last
		if !d.seen {
			o = obs{mark: mark{key: keyEmpty}}
		}
		row := fleetreport.DeviceRow{Device: fleetreport.SafeName(n), Value: valueOf(o.key), CtrldVersion: o.version, Action: o.action}
		if o.dated {
			row.When = rfc3339(o.at)
		}
		bucket := row.Bucket()
		s.Headline[bucket]++
		if bucket == fleetreport.BucketAttention {
			n, first := d.streak()
			row.Failures = n
			if n > 0 && first.dated {
				row.FailingSince = rfc3339(first.at)
			}
		}
		s.Devices = append(s.Devices, row)
		if c.latest {
			counts[o.key]++
		}
	}
	for _, l := range lists {
		addList(l)
	}
	var codeRows, stateRows []fleetreport.Row
	for k, n := range counts {
		s.Outcomes += n
		if n == 0 {
			continue
		}
		r := fleetreport.Row{Value: valueOf(key(k)), Count: n}
		if r.IsState() {
			stateRows = append(stateRows, r)
		} else {
			codeRows = append(codeRows, r)
		}
	}
	byCount := func(rows []fleetreport.Row) {
		sort.SliceStable(rows, func(i, j int) bool {
			if rows[i].Count != rows[j].Count {
				return rows[i].Count > rows[j].Count
			}
			return rows[i].Name() < rows[j].Name()
		})
	}
	byCount(codeRows)
	byCount(stateRows)
	s.Rows = append(codeRows, stateRows...)
	for i := range s.Rows {
		s.Rows[i].Share = float64(s.Rows[i].Count) / float64(s.Outcomes)
	}
	s.Running = counts[keyRunning]
	dayKeys := make([]int64, 0, len(days))
	for k := range days {
		dayKeys = append(dayKeys, k)
	}
	sort.Slice(dayKeys, func(i, j int) bool { return dayKeys[i] < dayKeys[j] })
	for _, k := range dayKeys {
		d := fleetreport.Day{Date: time.Unix(k*86400, 0).UTC().Format(time.DateOnly), Counts: append([]int(nil), days[k][:]...)}
		s.Days = append(s.Days, d)
	}
	return s
}

func rfc3339(t int64) string { return time.Unix(t, 0).UTC().Format(time.RFC3339) }
