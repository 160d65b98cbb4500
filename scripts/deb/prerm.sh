#!/bin/sh
# The .deb's prerm: on removal, removes ctrld with ctrld-install uninstall
# before the binaries go. An upgrade keeps ctrld running.
#
# When the removal fails (a deactivation PIN is needed, the service stays)
# the prerm fails and the package stays, so ctrld is never left running
# without the tool that removes it. /etc/ctrld-install/deactivation_pin,
# root-only, holds the PIN; ctrld-install reads it with --pin-file.
#
# DPKG_ROOT (dpkg --root with --force-script-chrootless, as the tests run
# it) is put in front of every path.
set -e

me='ctrld-install-prerm'
root=${DPKG_ROOT:-}
bin=$root/usr/sbin/ctrld-install
conf=$root/etc/ctrld-install
log=$root/var/log/ctrld-install.log

case $1 in
remove) ;;
*) exit 0 ;;
esac
if [ ! -x "$bin" ]; then
	exit 0
fi
set -- uninstall --log "$log"
if [ -f "$conf/deactivation_pin" ]; then
	set -- "$@" --pin-file "$conf/deactivation_pin"
fi
status=0
"$bin" "$@" </dev/null || status=$?
if [ "$status" -ne 0 ]; then
	printf '%s: error: ctrld could not be removed (exit %s), so the package stays; see the line above and %s\n' "$me" "$status" "$log" >&2
	exit 1
fi
exit 0
