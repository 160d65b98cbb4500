#!/bin/sh
# Munki installcheck_script for the ctrld package. Munki's polarity is the
# reverse of verify's: exit 0 means "install needed", any other status means
# "installed".
#
# It runs `ctrld-install verify` (starts and changes nothing). Healthy: exit
# 1, nothing to install. Anything else, ctrld-install missing included: exit
# 0, so Munki installs the package and its postinstall provisions. An error
# thus leads to an install, never to an unprovisioned machine counted as
# installed.
#
# CTRLD_INSTALL_BIN overrides the path below for the tests.

bin=${CTRLD_INSTALL_BIN:-/usr/local/bin/ctrld-install}
PATH=$PATH:/usr/bin:/bin:/usr/sbin:/sbin

if [ -x "$bin" ] && "$bin" verify </dev/null; then
	exit 1
fi
exit 0
