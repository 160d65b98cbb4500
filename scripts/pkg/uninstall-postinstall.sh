#!/bin/sh
# The postinstall of the payload-free uninstall package (mkpkg --uninstall):
# removes ctrld with ctrld-install uninstall, then the files the install
# package laid and its receipt. Installer runs it as root; its output lands
# in /var/log/install.log and its exit status is ctrld-install's, so a
# failed removal fails the package.
#
# deactivation_pin beside this script (mkpkg --pin-file) is ctrld's
# deactivation PIN, read by ctrld-install itself with --pin-file. After
# exit 0 it deletes /usr/local/bin/ctrld-install and /usr/local/bin/ctrld
# and forgets the package com.controld.ctrld (CTRLD_INSTALL_PACKAGE_ID
# names another); after a failure it keeps them for the diagnosis.
#
# CTRLD_INSTALL_BIN, CTRLD_INSTALL_CTRLD and CTRLD_INSTALL_LOG override the
# paths below; the tests need them, a production install does not.

me='ctrld-install-uninstall-pkg'
bin=${CTRLD_INSTALL_BIN:-/usr/local/bin/ctrld-install}
ctrld=${CTRLD_INSTALL_CTRLD:-/usr/local/bin/ctrld}
log=${CTRLD_INSTALL_LOG:-/var/log/ctrld-install.log}
package_id=${CTRLD_INSTALL_PACKAGE_ID:-com.controld.ctrld}
PATH=$PATH:/usr/bin:/bin:/usr/sbin:/sbin

fail() {
	printf '%s: error: %s\n' "$me" "$2" >&2
	exit "$1"
}

# ctrld is removed from the running system, not from another volume.
if [ "${3:-/}" != / ]; then
	fail 61 "the target volume is $3, not the startup disk; ctrld can only be removed from the running system"
fi
case $0 in
*/*) here=${0%/*} ;;
*) here=. ;;
esac
here=$(cd "$here" && pwd) || fail 60 "cannot find the directory this script is in"
if [ ! -x "$bin" ]; then
	fail 60 "ctrld-install is missing from $bin; remove ctrld with scripts/rmm/uninstall.sh instead"
fi

set -- uninstall --ctrld "$ctrld" --log "$log"
if [ -f "$here/deactivation_pin" ]; then
	set -- "$@" --pin-file "$here/deactivation_pin"
fi
"$bin" "$@" </dev/null
status=$?
if [ "$status" -ne 0 ]; then
	exit "$status"
fi
rm -f "$bin" "$ctrld"
if command -v pkgutil >/dev/null 2>&1; then
	pkgutil --forget "$package_id" >/dev/null 2>&1 || :
fi
exit 0
