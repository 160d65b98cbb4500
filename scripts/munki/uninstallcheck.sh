#!/bin/sh
# Munki uninstallcheck_script for the ctrld package: exit 0 means "uninstall
# needed", any other status "nothing to remove".
#
# Without it Munki would ask the installcheck_script, which says "not
# installed" for a ctrld that is installed but unhealthy, and would leave
# that ctrld in place. This script answers from what is on disk instead:
# removal is needed while ctrld-install is still there, since the uninstall
# script deletes it last, after ctrld uninstall succeeded (and ctrld-install
# uninstall itself says "not installed, nothing to do" when only
# ctrld-install is left).
#
# CTRLD_INSTALL_BIN overrides the path below for the tests.

bin=${CTRLD_INSTALL_BIN:-/usr/local/bin/ctrld-install}

if [ -e "$bin" ]; then
	exit 0
fi
exit 1
