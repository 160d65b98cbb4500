package install

import (
	"context"
	"os"
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
	command          string // record.CommandInstall or record.CommandUninstall
	lock             *lock.Lock
	out              *report.Printer
	installerVersion string
	now              func() time.Time
	// ctrldVersion and provisioning are what the journal carries over from
	// the record it replaces while a run is in progress, so that a killed
	// run does not lose them; the run's end sets them.
	ctrldVersion *string
	provisioning string
	warned       bool // the write error was reported once
	// carryVersion keeps the last run's ctrld version in a final record
	// that has none: a usage error's, which ran nothing.
	carryVersion bool
}

// finalTries and finalPause: the final record is tried again after a
// failure, which may be a moment's full disk or, on Windows, a reader
// holding the file while it is replaced.
const (
	finalTries = 3
	finalPause = 100 * time.Millisecond
)

func (j *Journal) write(rec record.Record, durable bool) error {
	write := record.WriteUnsynced
	if durable {
		write = record.Write
	}
	return write(j.path, rec)
}

// WriteFinal replaces the journal entry with the run's outcome. A journal
// entry that could not be written earlier does not stop it: every write
// stands on its own.
func (j *Journal) WriteFinal(s record.Summary) error {
	if j == nil {
		return nil
	}
	if j.carryVersion && s.CtrldVersion == nil {
		s.CtrldVersion = j.ctrldVersion
	}
	rec := record.New(s, j.now())
	rec.Command, rec.Provisioning = j.command, j.provisioning
	var err error
	for try := range finalTries {
		if try > 0 {
			time.Sleep(finalPause)
		}
		if err = j.write(rec, true); err == nil {
			return nil
		}
	}
	if j.warned {
		return nil // the same sentence was printed for an earlier write
	}
	return err
}

// SetProvisioning is what the run's end makes of the last provisioning.
func (j *Journal) SetProvisioning(p string) {
	if j != nil {
		j.provisioning = p
	}
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
	r, err := record.Read(record.Path(home))
	if err != nil {
		return nil
	}
	return &r
}

func (j *Journal) phase(phase string) {
	if j == nil {
		return
	}
	rec := record.Running(j.command, phase, os.Getpid(), j.installerVersion, j.ctrldVersion, j.provisioning, j.now())
	// The first entry is made durable (two fsyncs): a run killed from
	// here on must leave a record that says it was running.
	j.report(j.write(rec, phase == record.PhaseStarted))
}

func (j *Journal) report(err error) {
	if err != nil && !j.warned {
		j.warned = true // said once; the next phase and the final record are still tried
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
	j := &Journal{path: record.Path(home), command: record.CommandInstall, lock: l, installerVersion: installerVersion, now: deps.Now, carryVersion: true}
	// A usage error changes nothing on the device: what the last run knew
	// of it is carried over, a failed provisioning above all.
	if prev := previous(home); prev != nil {
		j.ctrldVersion, j.provisioning = prev.CtrldVersion, lastProvisioningWord(prev)
	}
	return j
}
