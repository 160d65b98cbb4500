#!/bin/sh
# Jamf Pro policy script: provisions ctrld with the ctrld-install that the
# ctrld package laid in /usr/local/bin.
#
# Parameters (Jamf passes $1 mount point, $2 computer name, $3 user name):
#   $4  provisioning token (required)
#   $5  extra flags for ctrld start, separated by spaces, for example
#       --custom-hostname=mac-1 --intercept-mode=dns (optional; values
#       cannot contain spaces)
#
# Jamf hands the token to this script on its command line; the script moves
# it to a private 0600 file that ctrld-install reads with --token-file, so it
# is on no other command line, and removes it on every exit path. The policy
# log ("Script result") shows only ctrld-install's lines, also appended to
# /var/log/ctrld-install.log. The exit status uses the jamf exit profile: a
# PIN-protected ctrld (already managed) is not a failed policy.
#
# CTRLD_INSTALL_BIN and CTRLD_INSTALL_LOG override the paths below; the
# tests need them, a production policy does not.

me='ctrld-install-jamf'
bin=${CTRLD_INSTALL_BIN:-/usr/local/bin/ctrld-install}
log=${CTRLD_INSTALL_LOG:-/var/log/ctrld-install.log}
PATH=$PATH:/usr/bin:/bin:/usr/sbin:/sbin

fail() {
	printf '%s: error: %s\n' "$me" "$2" >&2
	exit "$1"
}

# --- private token file: this block is the same in every script that takes a token ---
tmpdir=
token_file=
running=
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	if [ -n "$tmpdir" ]; then
		rm -rf "$tmpdir"
	fi
}
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
trap cleanup EXIT
trap 'interrupted $? 129' HUP
trap 'interrupted $? 130' INT
trap 'interrupted $? 143' TERM
# write_token VALUE puts VALUE in a new 0600 file inside a new 0700
# directory and sets token_file. printf is a shell builtin: the value is
# never on any process's command line.
write_token() {
	tmpdir=$(mktemp -d "${TMPDIR:-/tmp}/ctrld-install.XXXXXX") || return 1
	token_file=$tmpdir/token
	(umask 077 && printf '%s\n' "$1" >"$token_file")
}
# --- end of the private token file block ---

token=${4:-}
extra=${5:-}
# The token is $4 and nothing else: an exported variable must not stand in
# for a parameter the admin left empty.
unset CTRLD_PROVISION_TOKEN

if [ ! -x "$bin" ]; then
	fail 60 "ctrld-install is not installed at $bin; deploy the ctrld package before this policy runs"
fi
if [ -n "$token" ]; then
	write_token "$token" || fail 60 "cannot write the token to a private temporary file"
fi
token=

set -- --exit-profile jamf --log "$log"
if [ -n "$token_file" ]; then
	set -- "$@" --token-file "$token_file"
fi
if [ -n "$extra" ]; then
	# $5 is a list of flags: split it on white space, without globbing.
	set -f
	# shellcheck disable=SC2086
	set -- "$@" -- $extra
	set +f
fi
running=1
"$bin" "$@" </dev/null
status=$?
running=
exit "$status"
