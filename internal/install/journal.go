package install

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/Control-D-Inc/ctrld-install/internal/lock"
	"github.com/Control-D-Inc/ctrld-install/internal/record"
	"github.com/Control-D-Inc/ctrld-install/internal/report"
)

// Journal is the outcome record of a run that holds the home's lock. Only
// such a run writes the record: one that waited for the lock and gave up
// must not overwrite the holder's journal. A nil *Journal writes nothing.
type Journal struct {
	path             string
	lock             *lock.Lock
	out              *report.Printer
	installerVersion string
	now              func() time.Time
	// ctrldVersion is the provisioned version the journal carries while a
	// run is in progress, so that a killed run does not lose it.
	ctrldVersion *string
	broken       bool
}

func (j *Journal) write(rec record.Record, durable bool) error {
	if j == nil || j.broken {
		return nil
	}
	write := record.WriteUnsynced
	if durable {
		write = record.Write
	}
	if err := write(j.path, rec); err != nil {
		j.broken = true // say it once
		return err
	}
	return nil
}

// WriteFinal replaces the journal entry with the run's outcome.
func (j *Journal) WriteFinal(s record.Summary) error {
	if j == nil {
		return nil
	}
	return j.write(record.New(s, j.now()), true)
}

// Close releases the lock. The record is final by then.
func (j *Journal) Close() {
	if j != nil {
		j.lock.Release()
	}
}

// previous reads the outcome the last run left, for the ctrld version it
// provisioned. A damaged or absent record knows no version.
func previous(home string) *record.Record {
	r, err := record.Read(filepath.Join(home, record.FileName))
	if err != nil {
		return nil
	}
	return &r
}

func (j *Journal) phase(phase string) {
	if j == nil {
		return
	}
	durable := phase == record.PhaseStarted
	if err := j.write(record.Running(phase, os.Getpid(), j.installerVersion, j.ctrldVersion, j.now()), durable); err != nil {
		j.out.Errorf("the outcome record cannot be written in the home directory (--home)")
	}
}

// UsageJournal is where a usage error is recorded, so that inventory sees
// a misconfigured policy: the home's record, when the home exists, is safe,
// and no other run holds its lock (that run's journal must not be
// overwritten). nil means the error is not recorded.
func UsageJournal(home string, deps Deps, installerVersion string) *Journal {
	if ok, _ := deps.Privileged(); !ok {
		return nil
	}
	if fi, err := os.Lstat(home); err != nil || !fi.IsDir() {
		return nil
	}
	if deps.CheckHome(home) != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // try once, do not wait
	l, err := lock.Acquire(ctx, home)
	if err != nil {
		return nil
	}
	return &Journal{path: recordPath(home), lock: l, installerVersion: installerVersion, now: deps.Now}
}
