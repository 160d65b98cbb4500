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

	// Listener, "ip:port", is where the device's daemon serves DNS, and
	// turns on ctrld 1.5.0's self-check. `ctrld start` with --cd or
	// --cd-org then writes the ctrld.toml the daemon reads (the --config
	// path given, else <Home>/ctrld.toml) in the form of
	// captures/ctrld-1.5.0-toml-cd.txt with this listener, printing
	// "Generating controld config: <path>" after "Starting service" as
	// ctrld-1.5.0-change-bad-resolver.txt does; a file given with --config
	// that exists is kept. After the init script has started the daemon,
	// start asks the listener (or the address of a --listen flag) a DNS
	// question for up to about 2 s; with no answer it prints the service
	// log between "???" lines, removes the service and exits 1, so that
	// nothing is left, as the "after" lines of change-bad-resolver and
	// change-listen-unavailable say. The daemon (`ctrld run`) binds UDP on
	// the listener of its --config file, or on its --listen address, and
	// answers every query (NOERROR, the question echoed, no records) until
	// it is stopped; an address it cannot bind ends it with exit 1. And
	// `ctrld restart` reports a daemon that did not survive the restart as
	// ctrld-1.5.0-restart-dying-build.txt shows. Empty, none of this
	// happens: start, restart and the daemon behave as before.
	Listener string `json:"listener,omitempty"`
	// Resolvers, when not empty, are the resolver IDs the Control D API
	// knows. A daemon started with --cd for another ID fails as 1.5.0's
	// does (ctrld-1.5.0-change-bad-resolver.txt, whose "service log" is
	// the daemon's): it logs "failed to fetch resolver config
	// error="Device does not exist" mode=cd" as FTL, removes the service,
	// since start then finds "the service is not installed", and exits 1
	// at once. Empty, every ID is known.
	Resolvers []string `json:"resolvers,omitempty"`
	// AnswerDelayMS holds the daemon's first answer back this long after
	// it starts: a daemon that comes up a moment after start or restart
	// has returned. Queries before then go unanswered.
	AnswerDelayMS int `json:"answer_delay_ms,omitempty"`
	// Silent makes the daemon bind its listener and never answer: it runs,
	// and the device does not resolve.
	Silent bool `json:"silent,omitempty"`
}

// FormLegacy is Device.Form for ctrld 1.2.
const FormLegacy = "1.2"
