#!/bin/sh
# Intune shell script for macOS (Devices > macOS > Shell scripts, run as
# root): provisions ctrld with the ctrld-install that the ctrld package
# (deployed as a macOS app) laid in /usr/local/bin.
#
# Intune passes no parameters to macOS scripts: paste the provisioning token
# between the quotes below before uploading. CTRLD_PROVISION_TOKEN is used
# when the quotes are left empty. The token reaches ctrld-install through a
# private 0600 file removed on every exit path, never on a command line.
#
# The exit status uses the default profile: macOS keeps only 8 bits of it,
# so the intune profile's 1618 would arrive as 82 and mean nothing to the
# Intune agent. Any non-zero status is a failure that the script's "number
# of times to retry" setting retries.
#
# CTRLD_INSTALL_BIN and CTRLD_INSTALL_LOG override the paths below; the
# tests need them, a production script does not.

provision_token=''

me='ctrld-install-intune'
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

token=${provision_token:-${CTRLD_PROVISION_TOKEN:-}}
unset CTRLD_PROVISION_TOKEN
provision_token=

if [ ! -x "$bin" ]; then
	fail 60 "ctrld-install is not installed at $bin; deploy the ctrld package before this script runs"
fi
if [ -n "$token" ]; then
	write_token "$token" || fail 60 "cannot write the token to a private temporary file"
fi
token=

set -- --log "$log"
if [ -n "$token_file" ]; then
	set -- "$@" --token-file "$token_file"
fi
running=1
"$bin" "$@" </dev/null
status=$?
running=
exit "$status"
