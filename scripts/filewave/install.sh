#!/bin/sh
# FileWave fileset script (run as root after the fileset's files are laid
# down): provisions ctrld with the ctrld-install the fileset placed in
# /usr/local/bin.
#
# The token comes from a provision_token file the fileset places beside this
# script, or else from CTRLD_PROVISION_TOKEN set in the script's environment
# variables in FileWave Central. It reaches ctrld-install through a file,
# never on a command line; a token from the environment goes to a private
# 0600 file removed on every exit path.
#
# The exit status uses the filewave profile: 0 provisioned, 210 nothing to do
# (already provisioned, or a PIN-protected ctrld), 220 failed and not worth
# retrying, and a retryable code's own number (31, 64, 66), which FileWave
# retries after two minutes. This script's own failures exit 220 as well.
#
# CTRLD_INSTALL_BIN and CTRLD_INSTALL_LOG override the paths below; the
# tests need them, a production fileset does not.

me='ctrld-install-filewave'
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

if [ ! -x "$bin" ]; then
	fail 220 "ctrld-install is not installed at $bin; add it to the fileset"
fi
case $0 in
*/*) here=${0%/*} ;;
*) here=. ;;
esac
# Absolute, so the token file's path does not depend on a working directory.
here=$(cd "$here" && pwd) || fail 220 "cannot find the directory this script is in"
if [ -f "$here/provision_token" ]; then
	token_file=$here/provision_token
elif [ -n "${CTRLD_PROVISION_TOKEN:-}" ]; then
	write_token "$CTRLD_PROVISION_TOKEN" || fail 220 "cannot write the token to a private temporary file"
fi
unset CTRLD_PROVISION_TOKEN

set -- --exit-profile filewave --log "$log"
if [ -n "$token_file" ]; then
	set -- "$@" --token-file "$token_file"
fi
running=1
"$bin" "$@" </dev/null
status=$?
running=
exit "$status"
