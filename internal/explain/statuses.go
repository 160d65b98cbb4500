package explain

// ShellStatus is an exit status that something around ctrld-install
// reports itself: the shell that ran it, or the MDM script that wraps it.
// MDM tools run ctrld-install from a script, so the number their console
// shows may be the shell's or the script's rather than a code's.
type ShellStatus struct {
	Exit    int
	From    string // who reports Exit, after "comes from"
	Meaning string // what makes it report Exit
	// TellApart says how to tell it from the code registered with Exit;
	// "" for the shell's, which did not run ctrld-install at all.
	TellApart string
	Check     string // how to confirm it on the device, one sentence
	// Likelier: on a device, Exit is more often this than the code
	// registered with it, so explain says it first.
	Likelier bool
}

const (
	fromShell  = "the shell that ran ctrld-install"
	fromScript = "one of the MDM scripts around ctrld-install (scripts/: Jamf's policy.sh, the RMM, Intune and FileWave scripts, the pkg postinstall)"
)

// shellStatuses are the statuses a shell or the scripts report without
// ctrld-install having decided them. 126 and 60 collide with a registered
// code's exit: 126 is also ctrld's deactivation PIN, which the contract
// keeps unchanged for consumers, and 60 is also INSTALLER_FAILED. The
// others are 128 plus a signal's number, as POSIX shells report a child
// killed by that signal, and as the scripts exit when the signal reaches
// them outside ctrld-install's run (their trap block).
var shellStatuses = []ShellStatus{
	{
		Exit:      60,
		From:      fromScript,
		Meaning:   "The scripts exit 60 when they stop before ctrld-install runs, most often because ctrld-install is not installed where they look (/usr/local/bin/ctrld-install, C:\\ControlD\\ctrld-install.exe): the package with the binaries was not deployed first, or FileWave's fileset with the binaries is not associated yet (FileWave runs the script again later). The Windows scripts also exit 60 when they cannot give C:\\ControlD its permissions or replace ctrld.exe, and the pkg postinstall when the package is incomplete.",
		TellApart: "the script's own line on standard error starts with \"ctrld-install-<tool>: error:\" (ctrld-install-jamf, ctrld-install-rmm, ctrld-install-intune, ctrld-install-filewave) and names the path or the step; ctrld-install's own failure ends with a line holding code=INSTALLER_FAILED.",
		Check:     "ls -l /usr/local/bin/ctrld-install (macOS, Linux) or Test-Path C:\\ControlD\\ctrld-install.exe (Windows) shows whether it is installed; deploy the ctrld package before the policy or script that runs it.",
		Likelier:  true,
	},
	{
		Exit:    126,
		From:    fromShell,
		Meaning: "On macOS and Linux a shell reports 126 when it found the program but could not execute it: a binary built for another architecture, a file without its execute bit, or one on a file system mounted noexec; ctrld-install did not run at all.",
		Check:   "file /usr/local/bin/ctrld-install shows the architecture the binary was built for (compare it with uname -m), ls -l shows its execute bit, and mount shows whether its file system is mounted noexec.",
	},
	{
		Exit:    127,
		From:    fromShell,
		Meaning: "A shell reports 127 when the command was not found: ctrld-install is not installed at the path the script runs (the package with the binaries was not deployed first, or was removed), or the script names another path. ctrld-install did not run, so there is no outcome record.",
		Check:   "ls -l /usr/local/bin/ctrld-install (macOS, Linux) or Test-Path C:\\ControlD\\ctrld-install.exe (Windows); deploy the ctrld package before the policy or script that runs it.",
	},
	{
		Exit:    129,
		From:    fromShell,
		Meaning: "128 + 1: the script was ended by SIGHUP (its terminal or session closed) before or after ctrld-install ran. A SIGHUP during ctrld-install's run ends it with INSTALLER_INTERRUPTED (68) instead.",
		Check:   "ctrld-install status on the device shows the last run's outcome, INSTALLER_INTERRUPTED if one was cut short.",
	},
	{
		Exit:    130,
		From:    fromShell,
		Meaning: "128 + 2: the script was interrupted by SIGINT (Ctrl-C, or an agent cancelling the job) before or after ctrld-install ran. An interruption during ctrld-install's run ends it with INSTALLER_INTERRUPTED (68) instead.",
		Check:   "ctrld-install status on the device shows the last run's outcome, INSTALLER_INTERRUPTED if one was cut short.",
	},
	{
		Exit:    137,
		From:    fromShell,
		Meaning: "128 + 9: the script or ctrld-install was killed with SIGKILL, which nothing can catch: most often an MDM or RMM agent's own time limit for the script, or the system out of memory. A run killed this way leaves its journal, and ctrld-install status then reports INSTALLER_INTERRUPTED with the phase it reached.",
		Check:   "Compare the agent's script time limit with --timeout (5 minutes by default; the time limit must be longer), then read ctrld-install status on the device.",
	},
	{
		Exit:    143,
		From:    fromShell,
		Meaning: "128 + 15: the script was stopped by SIGTERM before or after ctrld-install ran, usually by the MDM or RMM agent (its time limit, a cancelled job, a shutdown). A SIGTERM during ctrld-install's run ends it with INSTALLER_INTERRUPTED (68) instead.",
		Check:   "Compare the agent's script time limit with --timeout, then read ctrld-install status on the device.",
	},
}

func shellStatus(n int) *ShellStatus {
	for i := range shellStatuses {
		if shellStatuses[i].Exit == n {
			return &shellStatuses[i]
		}
	}
	return nil
}

// FileWaveStatus is a negative status FileWave reports for a fileset's
// script in place of its exit status: the script did not end by itself.
type FileWaveStatus struct {
	Status   int
	Message  string // FileWave's words
	Meaning  string // for the ctrld-install scripts
	NextStep string
}

// fileWaveScriptStatuses is FileWave's "Fileset / Payload Script Exit Code
// Status" page, which lists these four beside 0, 210 and 220.
const fileWaveScriptStatuses = "https://kb.filewave.com/books/filesets-payloads/page/fileset-payload-script-exit-code-status"

var fileWaveStatuses = []FileWaveStatus{
	{
		Status:   -1000,
		Message:  "Crashed: the script crashed during execution.",
		Meaning:  "FileWave saw scripts/filewave/install.sh end abnormally rather than with an exit status of its own (a crash, or a kill).",
		NextStep: "Run ctrld-install status on the device: INSTALLER_INTERRUPTED with a phase means ctrld-install was killed during its run; otherwise check the fileset's script and that the binaries in it run on the device.",
	},
	{
		Status:   -1001,
		Message:  "Time Out Exceeded: the script ran longer than Get Info > Executable > 'Wait for executable to finish' > 'Wait for:'.",
		Meaning:  "FileWave stopped waiting for the script before ctrld-install's --timeout ran out, so it never saw the outcome. The run may have finished afterwards, or been killed; ctrld-install status tells.",
		NextStep: "Set the script's 'Wait for:' longer than --timeout (5 minutes by default) plus a minute, then read ctrld-install status on the device for the outcome of the run that timed out.",
	},
	{
		Status:   -1002,
		Message:  "No Logged In User: the script could not run because no user is logged in.",
		Meaning:  "The script is set to run as the logged-in user, so it waits for a login; ctrld-install needs root and no user.",
		NextStep: "Run the fileset's script as root, not as the logged-in user (Get Info > Executable).",
	},
	{
		Status:   -1003,
		Message:  "Failed To Start: the script could not start.",
		Meaning:  "The FileWave client could not start scripts/filewave/install.sh: the script is missing from the fileset, lost its execute permission, or its interpreter line names a shell the device does not have. ctrld-install did not run.",
		NextStep: "Check that install.sh is in the fileset with its execute permission and #!/bin/sh first line, then update the model.",
	},
}

func fileWaveStatus(n int) *FileWaveStatus {
	for i := range fileWaveStatuses {
		if fileWaveStatuses[i].Status == n {
			return &fileWaveStatuses[i]
		}
	}
	return nil
}
