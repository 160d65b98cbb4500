package states

// State is a state with what it means: a word printed where a device has
// no final code. ctrld-install status prints some, the Jamf extension
// attributes print others, and Jamf itself shows an attribute with no
// value as empty. Customers paste them as often as real codes, explain
// says what each means, and fleet reports count them as rows of their own,
// never as codes.
type State struct {
	Word     string // "" is the empty value
	Source   string // who prints it, for explain's heading
	Meaning  string
	NextStep string
}

// All lists every state with its explanation, in the order fleet reports
// list states of equal count.
var All = []State{
	{
		Word:     NeverRun,
		Source:   "a word ctrld-install status prints",
		Meaning:  "There is no outcome record: ctrld-install has not run on this device with this home directory.",
		NextStep: "Check that the MDM policy running ctrld-install is scoped to this device and has run, and that status reads the same --home as the install.",
	},
	{
		Word:     NotInstalled,
		Source:   "what verify and detection scripts report as \"not installed\", and what the Jamf extension attributes print without ctrld-install",
		Meaning:  "ctrld is not provisioned on this device: it has no ctrld service definition (verify's \"not installed\", exit 54), or ctrld-install itself is not there. It was never provisioned here, or it was removed.",
		NextStep: "Nothing is broken: scope the install policy to this device if it should be protected; the next install provisions it.",
	},
	{
		Word:     Running,
		Source:   "a word ctrld-install status prints",
		Meaning:  "A ctrld-install run was in progress when status read the outcome record.",
		NextStep: "Read the status again once the run's --timeout (5 minutes by default) has passed; a run that was killed then shows INSTALLER_INTERRUPTED.",
	},
	{
		Word:     Uninstalled,
		Source:   "a word ctrld-install status prints",
		Meaning:  "The last run was ctrld-install uninstall, and it removed ctrld (or found nothing to remove).",
		NextStep: "Nothing to do if the device should no longer be protected; otherwise scope the install policy to it again.",
	},
	{
		Word:     StatusFailed,
		Source:   "a word the Jamf extension attributes print",
		Meaning:  "The extension attribute ran ctrld-install but got no answer it could pass on: ctrld-install printed nothing usable (a damaged binary, or one that cannot run on this Mac).",
		NextStep: "Run ctrld-install status (or verify) by hand on the device as root and explain what it prints; reinstall the package if it does not run.",
	},
	{
		Word:     InvalidRecord,
		Source:   "a word ctrld-install status prints",
		Meaning:  "The outcome record exists but is damaged or was not written by ctrld-install.",
		NextStep: "Run the install again to rewrite the record; if it stays invalid, look for another tool writing to ctrld's home directory.",
	},
	{
		Word:     Empty,
		Source:   "an empty value: Jamf shows an extension attribute with no value, and a fleet report a device whose files hold no outcome",
		Meaning:  "Nothing was reported: the extension attribute has not run on this computer since it was added (or printed no <result> tag), or the device's files hold no outcome of ctrld-install.",
		NextStep: "Update the device's inventory (sudo jamf recon) and check that the attribute's script is the one in scripts/jamf; for a folder of logs, check that it holds the device's --log file or outcome record.",
	},
}

// Label is how a state is named where an empty string would vanish.
func Label(word string) string {
	if word == Empty {
		return "(empty)"
	}
	return word
}

// Lookup is the state whose word is w.
func Lookup(w string) (State, bool) {
	for _, s := range All {
		if s.Word == w {
			return s, true
		}
	}
	return State{}, false
}
