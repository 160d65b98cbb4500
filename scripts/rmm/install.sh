#!/bin/sh
# Generic RMM script for macOS and Linux (Datto RMM, NinjaOne, N-able,
# Fleet, Addigy, ...; run as root): provisions ctrld with the ctrld-install
# installed in /usr/local/bin.
#
# Set these in the tool's script or component variables, which arrive as
# environment variables:
#   CTRLD_PROVISION_TOKEN  provisioning token (required)
#   CTRLD_START_FLAGS      extra flags for ctrld start, separated by spaces
#                          (optional; values cannot contain spaces)
#   CTRLD_INSTALL_TIMEOUT  ctrld-install's budget for the whole run (optional,
#                          default 5m); keep it under the tool's own script
#                          time limit, for example 4m under Fleet's 5 minutes
# The token reaches ctrld-install through a private 0600 file removed on
# every exit path, never on a command line.
#
# Output: ctrld-install's lines on stdout, also appended to
# /var/log/ctrld-install.log. Exit status: ctrld-install's, default profile
# (0 success or nothing to do, otherwise the code's number).
#
# CTRLD_INSTALL_BIN and CTRLD_INSTALL_LOG override the paths below; the
# tests need them, a production script does not.

me='ctrld-install-rmm'
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

token=${CTRLD_PROVISION_TOKEN:-}
extra=${CTRLD_START_FLAGS:-}
timeout=${CTRLD_INSTALL_TIMEOUT:-}
unset CTRLD_PROVISION_TOKEN CTRLD_START_FLAGS

if [ ! -x "$bin" ]; then
	fail 60 "ctrld-install is not installed at $bin; install the ctrld package first"
fi
if [ -n "$token" ]; then
	write_token "$token" || fail 60 "cannot write the token to a private temporary file"
fi
token=

set -- --log "$log"
if [ -n "$timeout" ]; then
	set -- "$@" --timeout "$timeout"
fi
if [ -n "$token_file" ]; then
	set -- "$@" --token-file "$token_file"
fi
if [ -n "$extra" ]; then
	# A list of flags: split it on white space, without globbing.
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
