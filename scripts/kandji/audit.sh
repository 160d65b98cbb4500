#!/bin/sh
# Kandji Custom App audit script ("Audit and enforce"): exit 0 when ctrld is
# provisioned and running, non-zero otherwise, which makes Kandji install the
# Custom App (the ctrld package, whose postinstall provisions) again.
#
# It runs `ctrld-install verify`, which starts and changes nothing: its lines
# are the audit's output in the Kandji status and its exit status is the
# code's number (54 not registered, 55 not running, ...). When ctrld-install
# itself is missing the package was never installed: exit 1.
#
# Every failed audit means another install at the next check-in, and each
# install is one ctrld-install run with its own retries; see
# docs/mdm/kandji.md for a ctrld whose provisioning keeps failing.
#
# CTRLD_INSTALL_BIN overrides the path below for the tests.

me='ctrld-install-kandji'
bin=${CTRLD_INSTALL_BIN:-/usr/local/bin/ctrld-install}
PATH=$PATH:/usr/bin:/bin:/usr/sbin:/sbin

if [ ! -x "$bin" ]; then
	printf '%s: ctrld-install is not installed at %s; the package will be installed\n' "$me" "$bin"
	exit 1
fi
exec "$bin" verify </dev/null
