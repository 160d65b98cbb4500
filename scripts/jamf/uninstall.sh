#!/bin/sh
# Jamf Pro policy script: removes ctrld with ctrld-install uninstall, then
# ctrld-install's own files.
#
# Parameters (Jamf passes $1 mount point, $2 computer name, $3 user name):
#   $4       ctrld's deactivation PIN, digits only; leave it empty when ctrld
#            runs without one
#   $5-$11   one setting each, key=value, in any order, each key once:
#              timeout=2m    ctrld-install's budget for the whole run
#              cleanup=yes   also pass --cleanup to ctrld uninstall
#
# The PIN reaches ctrld-install on its standard input (--pin-stdin), written
# by printf, a shell builtin: it is on no other command line and in no file.
# A setting that is not understood ends the run before ctrld-install starts
# ("ctrld-install: error: ..." on stderr, the INSTALLER_USAGE line last on
# stdout, exit 61).
#
# The last line is ctrld-install's: "not installed, nothing to do (exit 0)",
# "uninstall succeeded (exit 0)", or "uninstall failed: stage=service
# code=... (exit N)", and the exit status is N under the default profile: a
# PIN that is missing or wrong (DEACTIVATION_PIN_REQUIRED, 126) fails the
# policy, because ctrld is still there. After exit 0 the script deletes
# /usr/local/bin/ctrld-install, its outcome record, lock and run witness
# in /etc/controld, and /var/log/ctrld-install.log; after a failure it keeps
# them, so the extension attribute and the log still tell what happened.
#
# Without ctrld-install (an earlier run removed it, or an old package laid
# only ctrld) the script runs ctrld's own uninstall itself and checks
# that the service definition is gone; with neither it says "not
# installed, nothing to do" and exits 0, so a second run is not a failure.
#
# CTRLD_INSTALL_BIN, CTRLD_INSTALL_HOME, CTRLD_INSTALL_LOG,
# CTRLD_INSTALL_CTRLD and CTRLD_INSTALL_SERVICE_FILE override the paths
# below; the tests need them, a production policy does not.

bin=${CTRLD_INSTALL_BIN:-/usr/local/bin/ctrld-install}
home=${CTRLD_INSTALL_HOME:-/etc/controld}
log=${CTRLD_INSTALL_LOG:-/var/log/ctrld-install.log}
PATH=$PATH:/usr/bin:/bin:/usr/sbin:/sbin
usage_line='ctrld-install: uninstall failed: stage=installer code=INSTALLER_USAGE (exit 61)'
usage_exit=61

# --- signals and the secret: this block is the same in every script that runs ctrld-install ---
running=
secret=
status=
# A signal that reaches the script while ctrld-install runs reaches
# ctrld-install too (same process group) and the shell acts on it only after
# ctrld-install has exited: its outcome, INSTALLER_INTERRUPTED included, is
# then the exit status. Before or after, the signal's own status is.
# shellcheck disable=SC2317 # called from the signal traps
interrupted() {
	if [ -n "$running" ]; then
		exit "$1"
	fi
	exit "$2"
}
trap 'interrupted $? 129' HUP
trap 'interrupted $? 130' INT
trap 'interrupted $? 143' TERM
# run_installer ARG... runs ctrld-install and sets status. The secret, when
# there is one, is the first line of its standard input, written by printf:
# a shell builtin starts no process, so the secret is on no command line,
# and nothing writes it to a file.
run_installer() {
	running=1
	if [ -n "$secret" ]; then
		printf '%s\n' "$secret" | "$bin" "$@"
	else
		"$bin" "$@" </dev/null
	fi
	status=$?
	running=
	secret=
}
# --- end of the signals and the secret block ---

# --- settings: this block is the same in every script that takes settings ---
nl='
'
opt_timeout=
opt_retries=
opt_min_version=
opt_force=
opt_profile=
opt_resolver=
opt_pin=
opt_cleanup=
# usage_error SENTENCE ends the run the way ctrld-install ends a usage
# error: the sentence on stderr, then $usage_line last on stdout, both
# appended to the log too, and ctrld-install never runs. The sentence names
# a setting, never its value: a misplaced secret must not reach a log.
usage_error() {
	printf 'ctrld-install: error: %s\n' "$1" >&2
	printf '%s\n' "$usage_line"
	if [ -n "$log" ] && [ ! -L "$log" ]; then
		now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
		(printf '%s ctrld-install: error: %s\n%s %s\n' "$now" "$1" "$now" "$usage_line" >>"$log") 2>/dev/null
	fi
	exit "$usage_exit"
}
# set_option NAME KEY VALUE checks one setting and keeps it. NAME is how
# the admin gave it ("CTRLD_INSTALL_TIMEOUT", "timeout= in parameter 6") and
# is all a message repeats. It returns 1 for a key it does not know.
# shellcheck disable=SC2034 # not every script uses every setting
set_option() {
	case $2 in
	timeout)
		case $3 in
		[0-9]*[hms]) case $3 in *[!0-9.hmnsu]*) usage_error "$1 needs a duration such as 90s or 10m" ;; esac ;;
		*) usage_error "$1 needs a duration such as 90s or 10m" ;;
		esac
		opt_timeout=$3
		;;
	retries)
		case $3 in '' | *[!0-9]*) usage_error "$1 needs a whole number such as 2" ;; esac
		opt_retries=$3
		;;
	min-version)
		case $3 in
		[0-9]* | v[0-9]*) case $3 in *[!0-9A-Za-z.+-]*) usage_error "$1 needs a version such as 1.5.0" ;; esac ;;
		*) usage_error "$1 needs a version such as 1.5.0" ;;
		esac
		opt_min_version=$3
		;;
	force | cleanup)
		case $3 in
		yes | true | 1) v=1 ;;
		no | false | 0 | '') v= ;;
		*) usage_error "$1 must be yes or no" ;;
		esac
		if [ "$2" = force ]; then opt_force=$v; else opt_cleanup=$v; fi
		;;
	exit-profile)
		case $3 in
		default | intune | filewave | jamf) opt_profile=$3 ;;
		*) usage_error "$1 must be one of default, intune, filewave, jamf" ;;
		esac
		;;
	resolver | pin)
		case $3 in
		'') usage_error "$1 is empty" ;;
		*"$nl"*) usage_error "$1 holds more than one line" ;;
		esac
		if [ "$2" = resolver ]; then opt_resolver=$3; else opt_pin=$3; fi
		;;
	*) return 1 ;;
	esac
}
# --- end of the settings block ---

# --- Jamf parameters: this block is the same in every Jamf policy script ---
# set_parameter N PARAMETER takes one key=value Jamf parameter; the keys
# accepted are those in $keys, each once. An unknown key is named only
# when it looks like one (at most 20 lower-case letters and hyphens):
# anything else may be a secret pasted into the wrong field.
set_parameter() {
	case $2 in
	'') return 0 ;;
	*=*) ;;
	*) usage_error "parameter $1 is not of the form key=value" ;;
	esac
	k=${2%%=*}
	# An exact match, word by word: "timeout retries" is not a key.
	known=
	for x in $keys; do
		if [ "$x" = "$k" ]; then
			known=yes
		fi
	done
	if [ -z "$known" ]; then
		list=
		for x in $keys; do
			list="${list:+$list, }$x="
		done
		case $k in
		'' | -* | *[!a-z-]*) ;;
		*)
			if [ ${#k} -le 20 ]; then
				usage_error "parameter $1 has the unknown key $k=; the keys are $list"
			fi
			;;
		esac
		usage_error "parameter $1 has an unknown key; the keys are $list"
	fi
	case " $seen " in
	*" $k "*) usage_error "$k= is given twice" ;;
	esac
	seen="$seen $k"
	set_option "$k= in parameter $1" "$k" "${2#*=}"
}
# --- end of the Jamf parameters block ---

# --- own files: this block is the same in every uninstall script ---
# remove_own_files deletes what ctrld-install itself left on the device,
# once ctrld is gone: its binary, the outcome record, the run lock and its
# witness in ctrld's home (and the home, when nothing else is left in it),
# and its log with the rotated copy. ctrld's own files are ctrld
# uninstall's business.
remove_own_files() {
	rm -f "$bin" "$home/ctrld-install-result.json" "$home/.ctrld-install.lock" "$home/.ctrld-install.running" "$log" "$log.1"
	rmdir "$home" 2>/dev/null || :
}
# --- end of the own files block ---

# --- ctrld without ctrld-install: this block is the same in every uninstall script ---
# A device can have ctrld and no ctrld-install: the package that laid ctrld
# predates ctrld-install, or an earlier run of this script removed
# ctrld-install after ctrld uninstall succeeded. remove_ctrld_alone then
# runs the uninstall ctrld-install would have run, in the form the installed
# release takes, and makes the same check (the service definition is gone),
# so a second uninstall is "nothing to do", not a failed policy. ctrld's
# own output is not shown: a released ctrld can print its token.
ctrld=${CTRLD_INSTALL_CTRLD:-/usr/local/bin/ctrld}
if [ -n "${CTRLD_INSTALL_SERVICE_FILE:-}" ]; then
	service_file=$CTRLD_INSTALL_SERVICE_FILE
elif [ "$(uname -s)" = Darwin ]; then
	service_file=/Library/LaunchDaemons/ctrld.plist
elif [ -d /run/systemd/system ]; then
	service_file=/etc/systemd/system/ctrld.service
else
	service_file=/etc/init.d/ctrld
fi
# alone_line LINE prints one line and appends it to the log, as
# ctrld-install would have.
alone_line() {
	printf '%s\n' "$1"
	if [ -n "$log" ] && [ ! -L "$log" ]; then
		(printf '%s %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$1" >>"$log") 2>/dev/null
	fi
}
# alone_failed CODE EXIT NEXT-STEP ends the run with ctrld-install's
# grammar: the next step, then the failure line last.
alone_failed() {
	alone_line "ctrld-install: next step: $3"
	alone_line "ctrld-install: uninstall failed: stage=service code=$1 (exit $2)"
	exit "$2"
}
remove_ctrld_alone() {
	if [ ! -e "$service_file" ]; then
		remove_own_files
		printf '%s\n' 'ctrld-install: not installed, nothing to do (exit 0)'
		exit 0
	fi
	if [ ! -x "$ctrld" ]; then
		alone_failed SERVICE_UNINSTALL_FAILED 56 "The service definition $service_file is there but no ctrld at $ctrld can remove it: remove the service with the service manager (launchctl bootout system/ctrld, systemctl disable --now ctrld) and delete the file."
	fi
	# ctrld before 1.3.0 names the command "service uninstall" and takes
	# neither --pin nor --cleanup; an unknown version gets today's form.
	v=$("$ctrld" --version 2>/dev/null </dev/null)
	v=${v##* }
	v=${v#v}
	major=${v%%.*}
	minor=${v#*.}
	minor=${minor%%.*}
	case $major.$minor in
	0.[0-9]* | 1.[0-2] | 1.[0-2][!0-9]*) set -- service uninstall ;;
	*)
		set -- uninstall
		if [ -n "$pin" ]; then set -- "$@" --pin "$pin"; fi
		if [ -n "$opt_cleanup" ]; then set -- "$@" --cleanup; fi
		;;
	esac
	pin=
	"$ctrld" "$@" </dev/null >/dev/null 2>&1
	st=$?
	if [ "$st" -eq 126 ]; then
		alone_failed DEACTIVATION_PIN_REQUIRED 126 "Give this script ctrld's deactivation PIN (a PIN that was given is not the one this ctrld was provisioned with), then run the uninstall again."
	fi
	if [ -e "$service_file" ]; then
		alone_failed SERVICE_UNINSTALL_FAILED 56 "Remove the service with the service manager (launchctl bootout system/ctrld, systemctl disable --now ctrld) and report the ctrld version to Support."
	fi
	remove_own_files
	printf '%s\n' 'ctrld-install: uninstall succeeded (exit 0)'
	exit 0
}
# --- end of the ctrld without ctrld-install block ---

pin=${4:-}
keys='timeout cleanup'
seen=
if [ $# -gt 4 ]; then
	shift 4
	n=5
	for p in "$@"; do
		if [ "$n" -gt 11 ]; then
			break
		fi
		set_parameter "$n" "$p"
		n=$((n + 1))
	done
fi
case $pin in
*[!0-9]*) usage_error "parameter 4 (the deactivation PIN) must be digits only" ;;
esac
if [ ! -x "$bin" ]; then
	remove_ctrld_alone
fi

set -- uninstall --log "$log"
if [ -n "$opt_timeout" ]; then set -- "$@" --timeout "$opt_timeout"; fi
if [ -n "$opt_cleanup" ]; then set -- "$@" --cleanup; fi
if [ -n "$pin" ]; then
	secret=$pin
	set -- "$@" --pin-stdin
fi
pin=
run_installer "$@"
if [ "$status" -eq 0 ]; then
	remove_own_files
fi
exit "$status"
