#!/bin/sh
# Intune shell script for macOS (Devices > macOS > Shell scripts, run as
# root): provisions ctrld with the ctrld-install that the ctrld package
# (deployed as a "macOS app (PKG)") laid in /usr/local/bin.
#
# Intune passes no parameters to macOS scripts: fill in the settings between
# the quotes below before uploading. Each empty one falls back to the
# environment variable named beside it, then to ctrld-install's default.

provision_token=''    # CTRLD_PROVISION_TOKEN: the provisioning token, or
provision_resolver='' # CTRLD_PROVISION_RESOLVER: a resolver ID instead
start_flags=''        # CTRLD_START_FLAGS: extra flags for ctrld start
time_limit=''         # CTRLD_INSTALL_TIMEOUT: budget for the run, default 5m
retries=''            # CTRLD_INSTALL_RETRIES: extra attempts, default 2
min_version=''        # CTRLD_INSTALL_MIN_VERSION: refuse an older ctrld
force=''              # CTRLD_INSTALL_FORCE: yes to provision a healthy ctrld
                      # again (after the token or the flags changed)

# The token or resolver ID reaches ctrld-install on its standard input,
# written by printf, a shell builtin: it is on no command line and in no
# file. A setting that is not understood ends the run before ctrld-install
# starts ("ctrld-install: error: <which setting>" on stderr, the
# INSTALLER_USAGE line last on stdout, exit 61); no value is repeated.
#
# The exit status uses the default profile: macOS keeps only 8 bits of it,
# so the intune profile's 1618 would arrive as 82 and mean nothing to the
# Intune agent. Any non-zero status is a failure that the script's "number
# of times to retry" setting retries. Lines also go to
# /var/log/ctrld-install.log.
#
# CTRLD_INSTALL_BIN and CTRLD_INSTALL_LOG override the paths below; the
# tests need them, a production script does not.

me='ctrld-install-intune'
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

# setting NAME KEY VALUE VARIABLE keeps the setting filled in at the top
# of the script (NAME, its VALUE), else the environment VARIABLE's.
setting() {
	if [ -n "$3" ]; then
		set_option "$1 (at the top of the script)" "$2" "$3"
	else
		eval "value=\${$4:-}"
		if [ -n "$value" ]; then
			set_option "$4" "$2" "$value"
		fi
	fi
}
token=${provision_token:-${CTRLD_PROVISION_TOKEN:-}}
extra=${start_flags:-${CTRLD_START_FLAGS:-}}
setting provision_resolver resolver "$provision_resolver" CTRLD_PROVISION_RESOLVER
setting time_limit timeout "$time_limit" CTRLD_INSTALL_TIMEOUT
setting retries retries "$retries" CTRLD_INSTALL_RETRIES
setting min_version min-version "$min_version" CTRLD_INSTALL_MIN_VERSION
setting force force "$force" CTRLD_INSTALL_FORCE
provision_token=
provision_resolver=
unset CTRLD_PROVISION_TOKEN CTRLD_PROVISION_RESOLVER CTRLD_START_FLAGS

case $token in
*"$nl"*) usage_error "provision_token holds more than one line" ;;
esac
if [ -n "$token" ] && [ -n "$opt_resolver" ]; then
	usage_error "provision_token and provision_resolver exclude each other; fill in one of them"
fi
if [ -z "$token" ] && [ -z "$opt_resolver" ]; then
	usage_error "no token: fill in provision_token (or provision_resolver) at the top of the script"
fi
if [ ! -x "$bin" ]; then
	fail 60 "ctrld-install is not installed at $bin; deploy the ctrld package before this script runs"
fi

set -- --log "$log"
if [ -n "$opt_timeout" ]; then set -- "$@" --timeout "$opt_timeout"; fi
if [ -n "$opt_retries" ]; then set -- "$@" --retries "$opt_retries"; fi
if [ -n "$opt_min_version" ]; then set -- "$@" --min-version "$opt_min_version"; fi
if [ -n "$opt_force" ]; then set -- "$@" --force; fi
if [ -n "$opt_resolver" ]; then
	secret=$opt_resolver
	set -- "$@" --resolver-stdin
else
	secret=$token
	set -- "$@" --token-stdin
fi
token=
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
