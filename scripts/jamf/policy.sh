#!/bin/sh
# Jamf Pro policy script: provisions ctrld with the ctrld-install that the
# ctrld package laid in /usr/local/bin.
#
# Parameters (Jamf passes $1 mount point, $2 computer name, $3 user name):
#   $4       provisioning token; leave it empty when resolver= is given,
#            and in the daily policy that only repairs and upgrades (a
#            stopped service, a new ctrld binary: neither needs the token)
#   $5       extra flags for ctrld start, separated by spaces, for example
#            --custom-hostname=mac-1 --intercept-mode=dns (values cannot
#            contain spaces)
#   $6-$11   one setting each, key=value, in any order, each key once:
#              timeout=10m        ctrld-install's budget for the whole run
#              retries=2          extra attempts for retryable codes
#              min-version=1.5.0  refuse a ctrld older than this
#              force=yes          provision even when ctrld is healthy
#                                 (after the token or the flags changed)
#              exit-profile=jamf  default, intune, filewave or jamf
#              resolver=ID        provision by resolver ID instead of a
#                                 token; a secret like the token
#
# The token (or resolver ID) reaches ctrld-install on its standard input,
# written by printf, a shell builtin: it is on no other command line and in
# no file. A setting that is not understood ends the run before ctrld-install
# starts, with "ctrld-install: error: <what is wrong>" on stderr and the
# INSTALLER_USAGE line last on stdout, exit 61; the message names the
# setting, never its value. The policy log ("Script result") shows only
# these lines and ctrld-install's, which also go to /var/log/ctrld-install.log.
# The exit status uses the jamf exit profile unless exit-profile= says
# otherwise: a PIN-protected ctrld (already managed) is not a failed policy.
#
# CTRLD_INSTALL_BIN and CTRLD_INSTALL_LOG override the paths below; the
# tests need them, a production policy does not.

me='ctrld-install-jamf'
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

token=${4:-}
extra=${5:-}
# The token is $4 and nothing else: an exported variable must not stand in
# for a parameter the admin left empty.
unset CTRLD_PROVISION_TOKEN CTRLD_PROVISION_RESOLVER

keys='timeout retries min-version force exit-profile resolver'
seen=
if [ $# -gt 5 ]; then
	shift 5
	n=6
	for p in "$@"; do
		if [ "$n" -gt 11 ]; then
			break
		fi
		set_parameter "$n" "$p"
		n=$((n + 1))
	done
fi

case $token in
*"$nl"*) usage_error "parameter 4 (the provisioning token) holds more than one line" ;;
esac
if [ -n "$token" ] && [ -n "$opt_resolver" ]; then
	usage_error "parameter 4 (the provisioning token) and resolver= exclude each other; give one of them"
fi
if [ ! -x "$bin" ]; then
	fail 60 "ctrld-install is not installed at $bin; deploy the ctrld package before this policy runs"
fi

set -- --exit-profile "${opt_profile:-jamf}" --log "$log"
if [ -n "$opt_timeout" ]; then set -- "$@" --timeout "$opt_timeout"; fi
if [ -n "$opt_retries" ]; then set -- "$@" --retries "$opt_retries"; fi
if [ -n "$opt_min_version" ]; then set -- "$@" --min-version "$opt_min_version"; fi
if [ -n "$opt_force" ]; then set -- "$@" --force; fi
if [ -n "$opt_resolver" ]; then
	secret=$opt_resolver
	set -- "$@" --resolver-stdin
elif [ -n "$token" ]; then
	secret=$token
	set -- "$@" --token-stdin
fi
# No token: the daily policy's repair and upgrade, which need none.
# ctrld-install ends a Mac that needs provisioning with INSTALLER_USAGE.
token=
opt_resolver=
if [ -n "$extra" ]; then
	# $5 is a list of flags: split it on white space, without globbing.
	set -f
	# shellcheck disable=SC2086
	set -- "$@" -- $extra
	set +f
fi
run_installer "$@"
exit "$status"
