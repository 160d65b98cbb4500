#!/bin/sh
# The .deb's postrm: a purge deletes /etc/ctrld-install, which holds the
# token or resolver ID and the PIN the admin put there, and the log.
#
# DPKG_ROOT (dpkg --root with --force-script-chrootless, as the tests run
# it) is put in front of every path.
set -e

root=${DPKG_ROOT:-}
if [ "$1" = purge ]; then
	rm -rf "$root/etc/ctrld-install"
	rm -f "$root/var/log/ctrld-install.log" "$root/var/log/ctrld-install.log.1"
fi
exit 0
