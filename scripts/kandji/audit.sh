#!/bin/sh
# Kandji Custom App audit script ("Audit and enforce"): exit 0 when ctrld is
# provisioned, running and at least min_version, non-zero otherwise, which
# makes Kandji install the Custom App (the ctrld package, whose postinstall
# provisions) again.
#
# Set min_version to the ctrld version the package carries (for example
# 1.5.0, as `ctrld --version` prints it): a Mac whose ctrld is older then
# fails the audit and gets the new package, even though its old ctrld still
# runs. Left empty, any version passes.
#
# It runs `ctrld-install verify`, which starts and changes nothing: its lines
# are the audit's output in the Kandji status and its exit status is the
# code's number (55 not running, 67 older than min_version, ...). A Mac that
# was never provisioned is a state, not a failure: verify prints
# "ctrld-install: not installed (exit 54)", and so does this script when
# ctrld-install itself is missing (exit 1).
#
# Every failed audit means another install at the next check-in, and each
# install is one ctrld-install run with its own retries; see
# docs/mdm/kandji.md for a ctrld whose provisioning keeps failing.
#
# CTRLD_INSTALL_BIN overrides the path below for the tests.

min_version=''

me='ctrld-install-kandji'
bin=${CTRLD_INSTALL_BIN:-/usr/local/bin/ctrld-install}
PATH=$PATH:/usr/bin:/bin:/usr/sbin:/sbin

if [ ! -x "$bin" ]; then
	printf '%s: not installed: no ctrld-install at %s; the package will be installed\n' "$me" "$bin"
	exit 1
fi
set -- verify
if [ -n "$min_version" ]; then
	set -- "$@" --min-version "$min_version"
fi
exec "$bin" "$@" </dev/null
