#!/bin/sh
# The .deb's postinst: provisions ctrld when the machine is configured for
# it, and otherwise says how to.
#
# The secret is a root-only file the admin (or the RMM tool) puts there
# before installing the package: /etc/ctrld-install/token (a provisioning
# token) or /etc/ctrld-install/resolver (a resolver ID); ctrld-install reads
# it itself, so it is on no command line. /etc/ctrld-install/start-flags
# may hold extra flags for ctrld start, on one line.
#
# A failed provisioning does not fail the package: a postinst that fails
# leaves dpkg with a half-configured package that every later apt run
# stumbles on, for something the network or the organisation's settings
# caused. The outcome is ctrld-install's last line here, in
# /var/log/ctrld-install.log and in `ctrld-install status`; an RMM script
# checks with `ctrld-install verify`.
#
# DPKG_ROOT (dpkg --root with --force-script-chrootless, as the tests run
# it) is put in front of every path.
set -e

me='ctrld-install-postinst'
root=${DPKG_ROOT:-}
bin=$root/usr/sbin/ctrld-install
conf=$root/etc/ctrld-install
log=$root/var/log/ctrld-install.log

if [ "$1" != configure ]; then
	exit 0
fi

note() {
	printf '%s: %s\n' "$me" "$1"
}

if [ -f "$conf/token" ]; then
	set -- --token-file "$conf/token"
elif [ -f "$conf/resolver" ]; then
	set -- --resolver-file "$conf/resolver"
else
	note "ctrld is not provisioned: no $conf/token. Put the provisioning token there (owned by root, mode 0600) and run: $bin install --token-file $conf/token"
	exit 0
fi
if [ -f "$conf/start-flags" ]; then
	IFS= read -r extra <"$conf/start-flags" || :
	if [ -n "$extra" ]; then
		# A list of flags: split on white space, without globbing.
		set -f
		# shellcheck disable=SC2086
		set -- "$@" -- $extra
		set +f
	fi
fi
status=0
"$bin" install --log "$log" "$@" </dev/null || status=$?
if [ "$status" -ne 0 ]; then
	note "provisioning ended with exit $status; the package stays installed. See the line above, $log and '$bin explain $status'."
fi
exit 0
