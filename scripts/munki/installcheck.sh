#!/bin/sh
# Munki installcheck_script for the ctrld package. Munki's polarity is the
# reverse of verify's: exit 0 means "install needed", any other status means
# "installed".
#
# Set min_version to the ctrld version the package carries (for example
# 1.5.0, as `ctrld --version` prints it): a Mac whose ctrld is older then
# needs the install, even though its old ctrld still runs, and the new
# package's postinstall applies it. Left empty, any version counts.
#
# It runs `ctrld-install verify` (starts and changes nothing; its lines go
# to Munki's log). Healthy and current: exit 1, nothing to install.
# Anything else, a Mac never provisioned ("ctrld-install: not installed
# (exit 54)", a state) and ctrld-install missing included: exit 0, so Munki
# installs the package. An error thus leads to an install, never to an
# unprovisioned Mac counted as installed.
#
# CTRLD_INSTALL_BIN overrides the path below for the tests.

min_version=''

me='ctrld-install-munki'
bin=${CTRLD_INSTALL_BIN:-/usr/local/bin/ctrld-install}
PATH=$PATH:/usr/bin:/bin:/usr/sbin:/sbin

if [ ! -x "$bin" ]; then
	printf '%s: not installed: no ctrld-install at %s; install needed\n' "$me" "$bin"
	exit 0
fi
set -- verify
if [ -n "$min_version" ]; then
	set -- "$@" --min-version "$min_version"
fi
if "$bin" "$@" </dev/null; then
	exit 1
fi
exit 0
