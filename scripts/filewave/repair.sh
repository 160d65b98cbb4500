#!/bin/sh
# FileWave Verification script for the "ctrld binaries" fileset (macOS; runs
# as root): repairs a stopped ctrld service and applies a new ctrld binary,
# neither of which needs the token, every time FileWave verifies the
# fileset. The provisioning fileset's Requirements script runs only when
# that fileset changes, so without this script nothing would notice a
# daemon that stopped later. See docs/mdm/filewave.md.
#
# It asks ctrld-install first whether ctrld was ever provisioned here
# (verify, which changes nothing): a device that never was is the
# provisioning fileset's business, so this script says so and exits 0.
# Otherwise it runs ctrld-install with no token: "already provisioned,
# nothing to do", "repair applied, ctrld restarted" or "upgrade applied,
# ctrld restarted" (exit 0), or the failure line and the code's number. The
# jamf profile exits 0 for a ctrld managed under another deactivation PIN,
# which no re-run can change.
#
# CTRLD_INSTALL_BIN and CTRLD_INSTALL_LOG override the paths below; the
# tests need them, a production script does not.

bin=${CTRLD_INSTALL_BIN:-/usr/local/bin/ctrld-install}
log=${CTRLD_INSTALL_LOG:-/var/log/ctrld-install.log}
PATH=$PATH:/usr/bin:/bin:/usr/sbin:/sbin

if [ ! -x "$bin" ]; then
	echo "ctrld-install-filewave: error: ctrld-install is not installed at $bin; the binaries' fileset is incomplete" >&2
	exit 60
fi
out=$("$bin" verify --timeout 30s 2>/dev/null </dev/null)
if [ $? -eq 54 ]; then
	case $out in
	*"ctrld-install: not installed (exit 54)")
		echo 'ctrld-install: not installed (exit 54)'
		exit 0
		;;
	esac
fi
"$bin" --exit-profile jamf --log "$log" </dev/null
