package report

import (
	"os"
)

// MaxLog is the size past which a log is rotated at the start of a run.
const MaxLog = 1 << 20

// OpenLog starts copying lines to the --log file. A log over MaxLog is
// first renamed to <log>.1, replacing an older one, so a device that runs
// the policy every 15 minutes keeps a bounded log. Each run starts with a
// header line of fixed words. A log that cannot be opened is reported and
// the run goes on: the exit status and stdout still carry the outcome. The
// returned function closes the log.
func (p *Printer) OpenLog(path, header string) func() {
	if path == "" {
		return func() {}
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() > MaxLog {
		_ = os.Rename(path, path+".1")
	}
	f, err := openAppend(path)
	if err != nil {
		p.Errorf("cannot open the log file; continuing without it")
		return func() {}
	}
	p.SetLog(f)
	p.LogOnly("%s", header)
	return func() {
		p.SetLog(nil)
		f.Close()
	}
}
