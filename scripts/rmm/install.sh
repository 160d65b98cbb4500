#!/bin/sh
# Generic RMM script for macOS and Linux (Datto RMM, NinjaOne, N-able,
# Fleet, Addigy, a Kandji Custom Script, ...; run as root): provisions ctrld
# with the ctrld-install installed in /usr/local/bin.
#
# Without a token or resolver ID it is the daily repair job: ctrld-install
# brings back a registered service that stopped, applies a new ctrld binary
# and otherwise does nothing; it never provisions. On a device with no ctrld
# service it can do nothing, and ctrld-install ends with INSTALLER_USAGE
# (exit 61, "no token given" on stderr): that device needs a run with the
# token.
#
# Settings come from the tool's script or component variables, which arrive
# as environment variables (or from assignments added at the top of this
# script, for tools without variables):
#   CTRLD_PROVISION_TOKEN      provisioning token (this or the resolver ID;
#                              neither for the daily repair job)
#   CTRLD_PROVISION_RESOLVER   resolver ID instead of a token; a secret too
#   CTRLD_START_FLAGS          extra flags for ctrld start, separated by
#                              spaces (values cannot contain spaces)
#   CTRLD_INSTALL_TIMEOUT      ctrld-install's budget for the whole run,
#                              default 5m; keep it under the tool's own
#                              script time limit (4m under Fleet's 5 minutes)
#   CTRLD_INSTALL_RETRIES      extra attempts for retryable codes, default 2
#   CTRLD_INSTALL_MIN_VERSION  refuse a ctrld older than this version
#   CTRLD_INSTALL_FORCE        yes: provision even when ctrld is healthy
#                              (after the token or the flags changed)
#   CTRLD_INSTALL_EXIT_PROFILE default, intune, filewave or jamf (the default)
# The token or resolver ID reaches ctrld-install on its standard input,
# written by printf, a shell builtin: it is on no command line and in no
# file. A setting that is not understood ends the run before ctrld-install
# starts ("ctrld-install: error: <which variable>" on stderr, the
# INSTALLER_USAGE line last on stdout, exit 61); no value is repeated.
#
# Output: ctrld-install's lines on stdout, also appended to
# /var/log/ctrld-install.log. Exit status: ctrld-install's, under the jamf
# profile unless CTRLD_INSTALL_EXIT_PROFILE names another: 0 for success,
# nothing to do, or a ctrld managed under another deactivation PIN (a
# settled device: the job must not fail every day on it), otherwise the
# code's number.
#
# CTRLD_INSTALL_BIN and CTRLD_INSTALL_LOG override the paths below; the
# tests need them, a production script does not.

me='ctrld-install-rmm'
bin=${CTRLD_INSTALL_BIN:-/usr/local/bin/ctrld-install}
log=${CTRLD_INSTALL_LOG:-/var/log/ctrld-install.log}
PATH=$PATH:/usr/bin:/bin:/usr/sbin:/sbin
usage_line='ctrld-install: provisioning failed: stage=installer code=INSTALLER_USAGE (exit 61)'
usage_exit=61

fail() {
	printf '%s: error: %s\n' "$me" "$2" >&2
	exit "$1"
}

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

token=${CTRLD_PROVISION_TOKEN:-}
resolver=${CTRLD_PROVISION_RESOLVER:-}
extra=${CTRLD_START_FLAGS:-}
# Read once, then out of the environment: ctrld-install and ctrld inherit
# nothing secret.
unset CTRLD_PROVISION_TOKEN CTRLD_PROVISION_RESOLVER CTRLD_START_FLAGS

for v in TIMEOUT:timeout RETRIES:retries MIN_VERSION:min-version FORCE:force EXIT_PROFILE:exit-profile; do
	eval "value=\${CTRLD_INSTALL_${v%%:*}:-}"
	if [ -n "$value" ]; then
		set_option "CTRLD_INSTALL_${v%%:*}" "${v#*:}" "$value"
	fi
done
# RMM tools re-run the job on a schedule. A device managed under another
# deactivation PIN is settled, nothing a re-run can change: the jamf
# profile exits 0 for it, and the last line still says
# DEACTIVATION_PIN_REQUIRED.
if [ -z "$opt_profile" ]; then
	opt_profile=jamf
fi
if [ -n "$resolver" ]; then
	set_option CTRLD_PROVISION_RESOLVER resolver "$resolver"
fi
case $token in
*"$nl"*) usage_error "CTRLD_PROVISION_TOKEN holds more than one line" ;;
esac
if [ -n "$token" ] && [ -n "$opt_resolver" ]; then
	usage_error "CTRLD_PROVISION_TOKEN and CTRLD_PROVISION_RESOLVER exclude each other; set one of them"
fi
if [ ! -x "$bin" ]; then
	fail 60 "ctrld-install is not installed at $bin; install the ctrld package first"
fi

set -- --log "$log"
if [ -n "$opt_profile" ]; then set -- --exit-profile "$opt_profile" "$@"; fi
if [ -n "$opt_timeout" ]; then set -- "$@" --timeout "$opt_timeout"; fi
if [ -n "$opt_retries" ]; then set -- "$@" --retries "$opt_retries"; fi
if [ -n "$opt_min_version" ]; then set -- "$@" --min-version "$opt_min_version"; fi
if [ -n "$opt_force" ]; then set -- "$@" --force; fi
# No secret, no secret flag: ctrld-install then repairs or does nothing,
# and says itself when the device needs the token.
if [ -n "$opt_resolver" ]; then
	secret=$opt_resolver
	set -- "$@" --resolver-stdin
elif [ -n "$token" ]; then
	secret=$token
	set -- "$@" --token-stdin
fi
token=
resolver=
opt_resolver=
if [ -n "$extra" ]; then
	# A list of flags: split it on white space, without globbing.
	set -f
	# shellcheck disable=SC2086
	set -- "$@" -- $extra
	set +f
fi
run_installer "$@"
exit "$status"
