#!/bin/sh
# Intune shell script for macOS (Devices > macOS > Scripts; run as signed-in
# user: No). Provisions ctrld with the ctrld-install that the ctrld package
# laid in /usr/local/bin, and on every later run repairs a stopped service
# or applies a new ctrld binary (no token needed for either). Set "Script
# frequency" (every day) and "Max number of times to retry" (3): see
# docs/mdm/intune.md. Intune passes no parameters: fill in the quotes below.

provision_token=''    # the provisioning token, or
provision_resolver='' # a resolver ID instead (not both)
start_flags=''        # extra flags for ctrld start, separated by spaces
time_limit=''         # ctrld-install's --timeout (default 5m)
retries=''            # ctrld-install's --retries (default 2)
min_version=''        # refuse a ctrld older than this version
force=''              # yes: provision a healthy, unchanged ctrld again

# Thin on purpose: ctrld-install checks every setting (a wrong one ends
# with its INSTALLER_USAGE line, exit 61) and decides what the run does.
# The jamf profile exits 0 for a ctrld managed under another deactivation
# PIN, which no re-run can change; the intune profile's 1618 would reach
# Intune as 82 (macOS keeps 8 bits of a status). The secret goes to
# ctrld-install's standard input from printf, a shell builtin: on no
# command line and in no file. Its lines also go to the log below.
# CTRLD_INSTALL_BIN and CTRLD_INSTALL_LOG are for the tests.
bin=${CTRLD_INSTALL_BIN:-/usr/local/bin/ctrld-install}
log=${CTRLD_INSTALL_LOG:-/var/log/ctrld-install.log}
if [ ! -x "$bin" ]; then
	echo "ctrld-install-intune: error: no ctrld-install at $bin; assign the ctrld package (macOS app (PKG)) to this Mac first" >&2
	exit 60
fi
set -- --exit-profile jamf --log "$log"
if [ -n "$time_limit" ]; then set -- "$@" --timeout "$time_limit"; fi
if [ -n "$retries" ]; then set -- "$@" --retries "$retries"; fi
if [ -n "$min_version" ]; then set -- "$@" --min-version "$min_version"; fi
case $force in
'' | no) ;;
yes) set -- "$@" --force ;;
*) set -- "$@" "--force=$force" ;; # ctrld-install refuses it
esac
secret=$provision_token
if [ -n "$provision_token" ]; then set -- "$@" --token-stdin; fi
if [ -n "$provision_resolver" ]; then
	secret=$provision_resolver
	set -- "$@" --resolver-stdin
fi
provision_token=
provision_resolver=
if [ -n "$start_flags" ]; then
	set -f # split on white space, no globbing
	# shellcheck disable=SC2086
	set -- "$@" -- $start_flags
	set +f
fi
if [ -n "$secret" ]; then
	printf '%s\n' "$secret" | "$bin" "$@"
else
	# No token: a repair or an upgrade, or INSTALLER_USAGE on a Mac that
	# has never been provisioned.
	"$bin" "$@" </dev/null
fi
