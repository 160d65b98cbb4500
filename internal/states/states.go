// Package states holds the words printed where a device has no final code,
// and what each means: status prints them, the Jamf extension attributes
// print some of them, explain explains them and fleet reports count each as
// a row of its own. Each word is spelled here once, so that status, explain
// and the report agree without depending on one another.
package states

// The state words, exactly as printed.
const (
	NeverRun      = "NEVER_RUN"      // no outcome record
	Running       = "RUNNING"        // a run holds the home's lock
	InvalidRecord = "INVALID_RECORD" // a record ctrld-install did not write, or a damaged one
	Uninstalled   = "UNINSTALLED"    // the last run removed ctrld
	NotInstalled  = "NOT_INSTALLED"  // no ctrld service definition (verify's "not installed")
	StatusFailed  = "STATUS_FAILED"  // a Jamf extension attribute got no answer from ctrld-install
	Empty         = ""               // an attribute with no value
)

// The lines status prints for the states that have no outcome, after
// "ctrld-install: ". A fleet report reads them back as their states.
const (
	LineNeverRun      = "no outcome recorded: ctrld-install has never run here"
	LineInvalidRecord = "the outcome record cannot be read"
	// LineRunning is followed by the phase, the process ID and the start.
	LineRunning = "a run is in progress: phase "
)
