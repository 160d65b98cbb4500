// Package codes is the registry of provisioning outcome codes: the single
// source of truth for every code's stage, exit status, class, scenario and
// next step. Documentation is generated from it.
//
// The registry is append-only. A code is never renumbered, renamed or
// removed; a retired code stays with Deprecated set. A test compares the
// registry with a committed snapshot to enforce this.
package codes

import "strings"

// Stage is the part of provisioning a failure belongs to. Each stage owns a
// range of exit statuses whose first number is the stage's catch-all.
type Stage string

const (
	StageNone      Stage = "" // only OK
	StageBootstrap Stage = "bootstrap"
	StageListener  Stage = "listener"
	StageService   Stage = "service"
	StageInstaller Stage = "installer"
)

// Stages lists the failure stages in pipeline order.
var Stages = []Stage{StageBootstrap, StageListener, StageService, StageInstaller}

// ExitRange is the inclusive exit-status range a stage owns.
func (s Stage) ExitRange() (lo, hi int) {
	switch s {
	case StageBootstrap:
		return 30, 39
	case StageListener:
		return 40, 49
	case StageService:
		return 50, 59
	case StageInstaller:
		return 60, 69
	}
	return 0, 0
}

// Class says what a consumer may do about an outcome.
type Class string

const (
	ClassOK             Class = "ok"
	ClassFatal          Class = "fatal"           // retrying the same thing will fail the same way
	ClassRetryable      Class = "retryable"       // a later attempt may succeed unchanged
	ClassAlreadyManaged Class = "already-managed" // ctrld is installed and protected; leave it alone
)

// Code is one registered outcome.
type Code struct {
	Name     string
	Stage    Stage
	Exit     int
	Class    Class
	Scenario string // what happened, one sentence
	NextStep string // the next safe action
	// UninstallNextStep replaces NextStep after an uninstall, where one is
	// its own: install's advice would send the admin the wrong way.
	UninstallNextStep string
	Evidence          string // what Support should ask for
	Since             string // ctrld-install version that introduced the code
	Deprecated        bool
}

// IsOK reports whether c is the success outcome.
func (c Code) IsOK() bool { return c.Name == OK }

// Names of every registered code, for use in Go code without string typos.
const (
	OK                                = "OK"
	BootstrapFailed                   = "BOOTSTRAP_FAILED"
	APIUnreachable                    = "API_UNREACHABLE"
	APIRejected                       = "API_REJECTED"
	APIDeviceInvalid                  = "API_DEVICE_INVALID"
	ListenerFailed                    = "LISTENER_FAILED"
	ListenerBindFailed                = "LISTENER_BIND_FAILED"
	ListenerConfiguredAddrUnavailable = "LISTENER_CONFIGURED_ADDR_UNAVAILABLE"
	ServiceFailed                     = "SERVICE_FAILED"
	ServiceInstallFailed              = "SERVICE_INSTALL_FAILED"
	ServiceStartFailed                = "SERVICE_START_FAILED"
	ServiceSelfcheckFailed            = "SERVICE_SELFCHECK_FAILED"
	ServiceNotRegistered              = "SERVICE_NOT_REGISTERED"
	ServiceNotRunning                 = "SERVICE_NOT_RUNNING"
	DeactivationPinRequired           = "DEACTIVATION_PIN_REQUIRED"
	InstallerFailed                   = "INSTALLER_FAILED"
	InstallerUsage                    = "INSTALLER_USAGE"
	InstallerNotRoot                  = "INSTALLER_NOT_ROOT"
	CtrldNotFound                     = "CTRLD_NOT_FOUND"
	CtrldTimeout                      = "CTRLD_TIMEOUT"
	CtrldFailedUnclassified           = "CTRLD_FAILED_UNCLASSIFIED"
	InstallerBusy                     = "INSTALLER_BUSY"
	CtrldVersionUnsupported           = "CTRLD_VERSION_UNSUPPORTED"
	InstallerInterrupted              = "INSTALLER_INTERRUPTED"
	InstallerHomeUnsafe               = "INSTALLER_HOME_UNSAFE"
	ServiceUninstallFailed            = "SERVICE_UNINSTALL_FAILED"
	ConfigInvalid                     = "CONFIG_INVALID"
	HostFilesFailed                   = "HOST_FILES_FAILED"
	APIResponseInvalid                = "API_RESPONSE_INVALID"
	APITLSFailed                      = "API_TLS_FAILED"
)

// registry is ordered by stage and exit status; new codes are appended to
// their stage, never inserted before an existing one.
var registry = []Code{
	{
		Name: OK, Stage: StageNone, Exit: 0, Class: ClassOK, Since: "0.1.0",
		Scenario: "ctrld was provisioned, its service definition exists and ctrld status reports it running.",
		NextStep: "Nothing to do.",
		Evidence: "None needed.",
	},
	{
		Name: BootstrapFailed, Stage: StageBootstrap, Exit: 30, Class: ClassFatal, Since: "0.1.0",
		Scenario: "ctrld failed while setting up with the Control D API for a reason not covered by a more specific bootstrap code.",
		NextStep: "Check that the device can reach api.controld.com over HTTPS and that the token or resolver ID is current, then run the install again.",
		Evidence: "The outcome record, the ctrld version and the date and time of the failure.",
	},
	{
		Name: APIUnreachable, Stage: StageBootstrap, Exit: 31, Class: ClassRetryable, Since: "0.1.0",
		Scenario: "ctrld could not reach the Control D API because the network, DNS or TLS was not working yet.",
		NextStep: "Let the next check-in retry; if it keeps failing, confirm the device has network access and that a firewall or proxy allows HTTPS to api.controld.com.",
		Evidence: "Whether the device had network access at enrolment, and any proxy or firewall in its path.",
	},
	{
		Name: APIRejected, Stage: StageBootstrap, Exit: 32, Class: ClassFatal, Since: "0.1.0",
		Scenario: "The Control D API refused the provisioning token.",
		NextStep: "Check in the Control D dashboard that the provisioning token exists, is not expired or exhausted, and update the token in the MDM configuration.",
		Evidence: "The organisation name and which provisioning token (by its label, never its value) the MDM uses.",
	},
	{
		Name: APIDeviceInvalid, Stage: StageBootstrap, Exit: 33, Class: ClassFatal, Since: "0.1.0",
		Scenario: "The Control D API says the resolver or device does not exist.",
		NextStep: "Check in the Control D dashboard that the resolver or device was not deleted, then re-provision with a current token or resolver ID.",
		Evidence: "The device name and organisation as shown in the Control D dashboard.",
	},
	{
		Name: ListenerFailed, Stage: StageListener, Exit: 40, Class: ClassFatal, Since: "0.1.0",
		Scenario: "ctrld could not start its DNS listener for a reason not covered by a more specific listener code.",
		NextStep: "Check for another DNS service on the device (port 53) and run the install again.",
		Evidence: "The list of processes listening on port 53 (lsof -nP -i :53 or netstat).",
	},
	{
		Name: ListenerBindFailed, Stage: StageListener, Exit: 41, Class: ClassFatal, Since: "0.1.0",
		Scenario: "ctrld found no free local address and port for its DNS listener because each bind attempt failed.",
		NextStep: "Stop or reconfigure the other program using port 53 on the loopback addresses (another DNS agent, VPN or dnsmasq), then run the install again.",
		Evidence: "The list of processes listening on port 53 (lsof -nP -i :53 or netstat) and any VPN or security agent installed.",
	},
	{
		Name: ListenerConfiguredAddrUnavailable, Stage: StageListener, Exit: 42, Class: ClassFatal, Since: "0.1.0",
		Scenario: "The listener address set in the configuration or flags cannot be used on this device.",
		NextStep: "Correct the listener address in the ctrld configuration or the extra flags passed to ctrld start, then run the install again.",
		Evidence: "The extra flags given after -- and the listener section of the Control D configuration.",
	},
	{
		Name: ServiceFailed, Stage: StageService, Exit: 50, Class: ClassFatal, Since: "0.1.0",
		Scenario: "The ctrld service failed for a reason not covered by a more specific service code.",
		NextStep: "Check the system service log for ctrld and run the install again.",
		Evidence: "The service log: /usr/local/var/log/ctrld.err.log on macOS, journalctl -u ctrld on Linux, the System event log on Windows.",
	},
	{
		Name: ServiceInstallFailed, Stage: StageService, Exit: 51, Class: ClassFatal, Since: "0.1.0",
		Scenario: "ctrld could not install its service definition with the system service manager.",
		NextStep: "Check that launchd, systemd or the Windows service manager accepts new services (no MDM restriction or leftover service entry), then run the install again.",
		Evidence: "The output of launchctl print system/ctrld, systemctl status ctrld or sc query ctrld.",
	},
	{
		Name: ServiceStartFailed, Stage: StageService, Exit: 52, Class: ClassFatal, Since: "0.1.0",
		Scenario: "The ctrld service was installed but the system service manager could not start it.",
		NextStep: "Check the service log for why ctrld exited at start-up, then run the install again.",
		Evidence: "The service log: /usr/local/var/log/ctrld.err.log on macOS, journalctl -u ctrld on Linux, the System event log on Windows.",
	},
	{
		Name: ServiceSelfcheckFailed, Stage: StageService, Exit: 53, Class: ClassFatal, Since: "0.1.0",
		Scenario: "The ctrld service started but did not answer its own test DNS query, so ctrld uninstalled it again.",
		NextStep: "Check for a firewall, VPN or security agent that blocks local DNS queries to ctrld's listener, then run the install again.",
		Evidence: "The firewall, VPN and security agents installed on the device.",
	},
	{
		Name: ServiceNotRegistered, Stage: StageService, Exit: 54, Class: ClassFatal, Since: "0.1.0",
		Scenario: "ctrld start reported success but the service definition does not exist afterwards.",
		NextStep: "Check whether another tool removes launch daemons or services, then run the install again.",
		Evidence: "Whether /Library/LaunchDaemons/ctrld.plist or /etc/systemd/system/ctrld.service exists, and any tool that manages those directories.",
	},
	{
		Name: ServiceNotRunning, Stage: StageService, Exit: 55, Class: ClassFatal, Since: "0.1.0",
		Scenario: "The ctrld service is installed but ctrld status does not report it running.",
		NextStep: "Check the service log for why ctrld stopped, then run the install again.",
		Evidence: "The output of ctrld status and the service log.",
	},
	{
		Name: DeactivationPinRequired, Stage: StageService, Exit: 126, Class: ClassAlreadyManaged, Since: "0.1.0",
		Scenario:          "ctrld is already running with a deactivation PIN, so it refused to be re-provisioned.",
		NextStep:          "Nothing to do if the device should stay protected; to re-provision, deactivate ctrld with its PIN first.",
		UninstallNextStep: "Give ctrld-install uninstall the deactivation PIN with --pin-file or --pin-stdin (a PIN that was given is not the one this ctrld was provisioned with), then run the uninstall again.",
		Evidence:          "Whether the device was already enrolled and who holds the deactivation PIN.",
	},
	{
		Name: InstallerFailed, Stage: StageInstaller, Exit: 60, Class: ClassFatal, Since: "0.1.0",
		Scenario: "ctrld-install itself failed for a reason not covered by a more specific installer code.",
		NextStep: "Run ctrld-install again with --log pointing at a writable file and send the log.",
		Evidence: "The ctrld-install log file and the outcome record.",
	},
	{
		Name: InstallerUsage, Stage: StageInstaller, Exit: 61, Class: ClassFatal, Since: "0.1.0",
		Scenario: "ctrld-install was called with invalid arguments, so nothing was started.",
		NextStep: "Correct the command line in the MDM script using the error line printed before this one (ctrld-install -h lists the flags).",
		Evidence: "The MDM script or policy command line, with the token removed.",
	},
	{
		Name: InstallerNotRoot, Stage: StageInstaller, Exit: 62, Class: ClassFatal, Since: "0.1.0",
		Scenario: "ctrld-install was not run as root (or as an elevated administrator on Windows).",
		NextStep: "Run it from the MDM as root or SYSTEM, or with sudo when running by hand.",
		Evidence: "How the MDM runs the script (user context or system context).",
	},
	{
		Name: CtrldNotFound, Stage: StageInstaller, Exit: 63, Class: ClassFatal, Since: "0.1.0",
		Scenario: "The ctrld binary is missing or not executable at the expected path.",
		NextStep: "Install the ctrld binary (or pass its path with --ctrld) before running ctrld-install.",
		Evidence: "The path given with --ctrld and a listing of that directory.",
	},
	{
		Name: CtrldTimeout, Stage: StageInstaller, Exit: 64, Class: ClassRetryable, Since: "0.1.0",
		Scenario:          "ctrld start did not finish within the time limit and was stopped.",
		NextStep:          "Run the install again, with a longer --timeout if the network is slow; if it keeps timing out, collect the service log.",
		UninstallNextStep: "Run the uninstall again, with a longer --timeout; if it keeps timing out, collect the service log.",
		Evidence:          "The --timeout used and the service log.",
	},
	{
		Name: CtrldFailedUnclassified, Stage: StageInstaller, Exit: 65, Class: ClassFatal, Since: "0.1.0",
		Scenario: "ctrld start failed in a way ctrld-install does not recognise.",
		NextStep: "Send Support the ctrld version, the --log file and the outcome record (ctrld-install status --format json), and update ctrld-install, whose next release may recognise the failure. Do not run ctrld start by hand to see its message: ctrld prints the provisioning token in it.",
		Evidence: "The ctrld version, the operating system and its version, the --log file and the outcome record; never ctrld's own output, which holds the token.",
	},
	{
		Name: InstallerBusy, Stage: StageInstaller, Exit: 66, Class: ClassRetryable, Since: "0.1.0",
		Scenario:          "Another ctrld-install run held the lock on the home directory for the whole time limit.",
		NextStep:          "Let the other run finish, then run the install again.",
		UninstallNextStep: "Let the other run finish, then run the uninstall again.",
		Evidence:          "The running processes named ctrld-install or ctrld on the device.",
	},
	{
		Name: CtrldVersionUnsupported, Stage: StageInstaller, Exit: 67, Class: ClassFatal, Since: "0.1.0",
		Scenario: "The installed ctrld is older than required: older than --min-version, or too old for a flag ctrld-install passes to it (a provisioning token needs ctrld 1.3.0 or later).",
		NextStep: "Deploy a newer ctrld binary (1.3.0 or later for a provisioning token, or the --min-version given), or provision this ctrld by resolver ID with --resolver, then run the install again.",
		Evidence: "The output of ctrld --version.",
	},
	{
		Name: InstallerInterrupted, Stage: StageInstaller, Exit: 68, Class: ClassFatal, Since: "0.1.0",
		Scenario:          "ctrld-install was stopped by a signal or killed before it finished.",
		NextStep:          "Check whether the MDM agent has a shorter time limit than --timeout, then run the install again.",
		UninstallNextStep: "Check whether the MDM agent has a shorter time limit than --timeout, then run the uninstall again.",
		Evidence:          "The MDM agent's time limit for scripts and the outcome record.",
	},
	{
		Name: ServiceUninstallFailed, Stage: StageService, Exit: 56, Class: ClassFatal, Since: "0.2.0",
		Scenario: "ctrld uninstall ran but the ctrld service is still installed or still running afterwards.",
		NextStep: "Run ctrld-install uninstall again as root; if the service stays, remove it with the service manager (launchctl bootout system/ctrld, systemctl disable --now ctrld, sc delete ctrld) and report the ctrld version to Support.",
		Evidence: "The ctrld version, the output of ctrld status, and whether the service definition still exists.",
	},
	{
		Name: ConfigInvalid, Stage: StageBootstrap, Exit: 34, Class: ClassFatal, Since: "0.2.0",
		Scenario: "ctrld could not read or use its configuration: the config file in its home directory, or the configuration it fetched, is malformed or invalid.",
		NextStep: "Remove or correct ctrld.toml in ctrld's home directory (a file left by an earlier install or edited by hand), check the resolver's configuration in the Control D dashboard, then run the install again.",
		Evidence: "The ctrld version and whether a ctrld.toml existed in ctrld's home directory before the install (its content with the token and resolver ID removed).",
	},
	{
		Name: HostFilesFailed, Stage: StageBootstrap, Exit: 35, Class: ClassFatal, Since: "0.2.0",
		Scenario: "ctrld could not find or write a file or directory it needs on this device: its home directory, its config file or its log.",
		NextStep: "Check that ctrld's home directory and log directory exist and are writable by root (not on a full or read-only file system, not blocked by a security agent), then run the install again.",
		Evidence: "Free disk space, the permissions of ctrld's home directory, and any security agent that restricts writes by new programs.",
	},
	{
		Name: APIResponseInvalid, Stage: StageBootstrap, Exit: 36, Class: ClassRetryable, Since: "0.2.0",
		Scenario: "The Control D API's address answered with something that is not the Control D API's answer (an outage page, a proxy, a captive portal).",
		NextStep: "Let the next check-in retry; if it persists on one network, look for a captive portal or a proxy in front of api.controld.com.",
		Evidence: "The network the device was on at enrolment (guest or hotel Wi-Fi, a VPN), any web proxy or captive portal in its path, and the date and time of the failure.",
	},
	{
		Name: APITLSFailed, Stage: StageBootstrap, Exit: 37, Class: ClassFatal, Since: "0.2.0",
		Scenario: "The Control D API's TLS certificate could not be verified (an SSL-inspecting proxy, or a wrong clock).",
		NextStep: "Exempt api.controld.com from TLS inspection and check the device's date and time, then run the install again.",
		Evidence: "Any proxy, firewall or security agent that inspects TLS on the device's network, and the device's date, time and time zone.",
	},
	{
		Name: InstallerHomeUnsafe, Stage: StageInstaller, Exit: 69, Class: ClassFatal, Since: "0.2.0",
		Scenario: "ctrld-install refused its home directory (--home) because someone other than root could change it: a symbolic link, not owned by root (Windows: SYSTEM or Administrators), or writable by other users (on Windows, a C:\\ControlD made by copying inherits Authenticated Users: Modify from C:\\). Nothing was run.",
		NextStep: "Make the home directory writable by root only (Windows: icacls C:\\ControlD /inheritance:r /grant:r *S-1-5-32-544:(OI)(CI)F *S-1-5-18:(OI)(CI)F; macOS and Linux: chown root and chmod go-w), or install the package, which creates it so, then run the install again.",
		Evidence: "The error line before the failure line, which names the check that failed, and the directory's owner and permissions (ls -ld, or icacls on Windows).",
	},
}

// All returns every registered code in registry order. The slice is a copy.
func All() []Code {
	out := make([]Code, len(registry))
	copy(out, registry)
	return out
}

var byName = func() map[string]Code {
	m := make(map[string]Code, len(registry))
	for _, c := range registry {
		m[c.Name] = c
	}
	return m
}()

// Lookup returns the code registered under name. Names are case-sensitive.
func Lookup(name string) (Code, bool) {
	c, ok := byName[name]
	return c, ok
}

// LookupFold is Lookup ignoring case and surrounding white space, for input
// typed by people.
func LookupFold(name string) (Code, bool) {
	return Lookup(strings.ToUpper(strings.TrimSpace(name)))
}

// ByExit returns the code registered with exit status n.
func ByExit(n int) (Code, bool) {
	for _, c := range registry {
		if c.Exit == n {
			return c, true
		}
	}
	return Code{}, false
}

// Must returns the code registered under name and panics when there is none.
// It is for names written in the program, where absence is a programming error.
func Must(name string) Code {
	c, ok := byName[name]
	if !ok {
		panic("codes: unregistered code " + name)
	}
	return c
}

// Agrees reports whether a (stage, code, exit) triple names a registered code
// exactly as the registry has it.
func Agrees(stage, name string, exit int) (Code, bool) {
	c, ok := byName[name]
	if !ok || string(c.Stage) != stage || c.Exit != exit {
		return Code{}, false
	}
	return c, true
}
