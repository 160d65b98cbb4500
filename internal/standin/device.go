package standin

// Device is the machine's service manager as ctrld 1.x drives it on Linux
// without systemd: `ctrld start` writes the SysV init script of the service
// library ctrld uses (shared/reference/captures/ctrld-1.5.0-initscript.txt)
// and runs it, and the script starts the daemon with `$cmd >> log &`, in
// the process group of whoever ran start or restart. The paths the real
// script has under /etc, /var/run and /var/log are the Device's, so a test
// keeps them in its temporary directory.
type Device struct {
	ServiceFile string `json:"service_file"` // the init script (/etc/init.d/ctrld)
	PIDDir      string `json:"pid_dir"`      // its pid_file's directory (/var/run)
	LogDir      string `json:"log_dir"`      // its stdout_log's and stderr_log's (/var/log)
	Home        string `json:"home"`         // ctrld's home, where the script cds (/etc/controld)
	// Form "1.2" is ctrld 1.2: status, restart and uninstall exist only
	// under `ctrld service`. "" is 1.3.0 and later.
	Form string `json:"form,omitempty"`
	// TokenResolver is the resolver ID the API gives for a token: ctrld
	// writes it as --cd=ID in the definition, never the token.
	TokenResolver string `json:"token_resolver,omitempty"`
	// PinCheck, when set, is what start and uninstall do first while the
	// daemon runs: ctrld 1.5.0 asks the running daemon whether a
	// deactivation PIN is needed before it stops anything, and the daemon
	// asks the Control D API before it answers. With the API not answering
	// (ctrld-1.5.0-change-api-hang.txt) start prints "deactivation pin is
	// invalid" with its control client's timeout and exits 126, the
	// service untouched. An Exit other than 0 ends the command there with
	// that status; 0 goes on, as with a daemon that has no PIN.
	PinCheck *Action `json:"pin_check,omitempty"`
}

// FormLegacy is Device.Form for ctrld 1.2.
const FormLegacy = "1.2"
