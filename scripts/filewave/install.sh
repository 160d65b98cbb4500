#!/bin/sh
# FileWave fileset script, to run as a Requirements script (as root): it
# provisions ctrld with the ctrld-install that another fileset placed in
# /usr/local/bin, and its exit status is one FileWave's requirements
# processing understands (docs/mdm/filewave.md explains the two filesets):
#   0     provisioned now: requirements met
#   210   nothing to do (ctrld already provisioned and healthy, or running
#         under a deactivation PIN): "Success (Skipped Install)"
#   220   a fatal code, or a setting not understood: "Failed! (Will Not
#         Retry)", until an administrator or a new fileset version retries
#   other a retryable code's own number (31, 64, 66), or 60 while
#         ctrld-install is not on the device yet: FileWave runs the
#         requirements scripts again 2 minutes later
#
# The token: a file provision_token beside this script (the token on its
# first line), else the script's environment variable CTRLD_PROVISION_TOKEN
# (Get Info > Executable > Environment Variables). A resolver ID instead:
# provision_resolver beside the script, or CTRLD_PROVISION_RESOLVER. A value
# from the environment reaches ctrld-install on its standard input, written
# by printf, a shell builtin: it is on no command line and in no file. More
# environment variables: CTRLD_START_FLAGS, CTRLD_INSTALL_TIMEOUT,
# CTRLD_INSTALL_RETRIES, CTRLD_INSTALL_MIN_VERSION and CTRLD_INSTALL_FORCE
# (yes: provision even when ctrld is healthy).
#
# CTRLD_INSTALL_BIN and CTRLD_INSTALL_LOG override the paths below; the
# tests need them, a production fileset does not.

me='ctrld-install-filewave'
bin=${CTRLD_INSTALL_BIN:-/usr/local/bin/ctrld-install}
log=${CTRLD_INSTALL_LOG:-/var/log/ctrld-install.log}
PATH=$PATH:/usr/bin:/bin:/usr/sbin:/sbin
usage_line='ctrld-install: provisioning failed: stage=installer code=INSTALLER_USAGE (exit 61)'
# The filewave profile's status for a fatal code: do not retry.
usage_exit=220

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

case $0 in
*/*) here=${0%/*} ;;
*) here=. ;;
esac
# Absolute, so the files' paths do not depend on a working directory.
here=$(cd "$here" && pwd) || fail 220 "cannot find the directory this script is in"
token=${CTRLD_PROVISION_TOKEN:-}
extra=${CTRLD_START_FLAGS:-}
resolver=${CTRLD_PROVISION_RESOLVER:-}
unset CTRLD_PROVISION_TOKEN CTRLD_PROVISION_RESOLVER CTRLD_START_FLAGS
for v in TIMEOUT:timeout RETRIES:retries MIN_VERSION:min-version FORCE:force EXIT_PROFILE:exit-profile; do
	eval "value=\${CTRLD_INSTALL_${v%%:*}:-}"
	if [ -n "$value" ]; then
		set_option "CTRLD_INSTALL_${v%%:*}" "${v#*:}" "$value"
	fi
done
if [ -n "$resolver" ]; then
	set_option CTRLD_PROVISION_RESOLVER resolver "$resolver"
fi
case $token in
*"$nl"*) usage_error "CTRLD_PROVISION_TOKEN holds more than one line" ;;
esac
# A file beside the script wins over the environment.
token_file=
resolver_file=
if [ -f "$here/provision_token" ]; then
	token_file=$here/provision_token
	token=
fi
if [ -f "$here/provision_resolver" ]; then
	resolver_file=$here/provision_resolver
	opt_resolver=
fi
if { [ -n "$token_file" ] || [ -n "$token" ]; } && { [ -n "$resolver_file" ] || [ -n "$opt_resolver" ]; }; then
	usage_error "a token and a resolver ID exclude each other; give the fileset one of them"
fi
if [ -z "$token_file$token$resolver_file$opt_resolver" ]; then
	usage_error "no token: put provision_token beside the script or set CTRLD_PROVISION_TOKEN in its environment variables"
fi
if [ ! -x "$bin" ]; then
	# Not 220: the fileset that carries the binaries may simply not have
	# arrived yet, and FileWave tries again in 2 minutes.
	fail 60 "ctrld-install is not installed at $bin yet; the fileset with the binaries must be associated too"
fi

set -- --exit-profile "${opt_profile:-filewave}" --log "$log"
if [ -n "$opt_timeout" ]; then set -- "$@" --timeout "$opt_timeout"; fi
if [ -n "$opt_retries" ]; then set -- "$@" --retries "$opt_retries"; fi
if [ -n "$opt_min_version" ]; then set -- "$@" --min-version "$opt_min_version"; fi
if [ -n "$opt_force" ]; then set -- "$@" --force; fi
if [ -n "$token_file" ]; then
	set -- "$@" --token-file "$token_file"
elif [ -n "$resolver_file" ]; then
	set -- "$@" --resolver-file "$resolver_file"
elif [ -n "$opt_resolver" ]; then
	secret=$opt_resolver
	set -- "$@" --resolver-stdin
else
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
