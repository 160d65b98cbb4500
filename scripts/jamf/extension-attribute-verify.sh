#!/bin/sh
# Jamf Pro Extension Attribute (Data Type: String, Input Type: Script):
# ctrld's state now, as `ctrld-install verify --min-version` finds it, for
# the Smart Group that scopes the provisioning policy. The other attribute,
# extension-attribute.sh, reports the last run; this one checks the device
# at every inventory update and changes nothing.
#
# Set min_version to the ctrld version the package carries (for example
# 1.5.0, the version printed by `ctrld --version`), so that a Mac with an
# older ctrld falls into the Smart Group and gets the new package, even
# though its old ctrld still runs. Left empty, any version counts as current.
#
# Prints exactly one line, <result>WORD</result>, where WORD is one of
#   OK                         provisioned, running, version current
#   NOT_INSTALLED              never provisioned, or ctrld-install missing:
#                              a state, not a failure
#   CTRLD_VERSION_UNSUPPORTED  running, but older than min_version
#   a verify code              SERVICE_NOT_RUNNING, ... (ctrld-install
#                              explain CODE)
#   STATUS_FAILED              ctrld-install printed no usable answer
# It always exits 0: Jamf stores the text, not the status.
#
# CTRLD_INSTALL_BIN overrides the path below for the tests.

min_version=''

bin=${CTRLD_INSTALL_BIN:-/usr/local/bin/ctrld-install}
PATH=$PATH:/usr/bin:/bin:/usr/sbin:/sbin

# --- verify word: this block is the same in every script that reports verify's answer as one word ---
word=NOT_INSTALLED
if [ -x "$bin" ]; then
	# Bounded, so a hung ctrld status cannot hold up the inventory.
	set -- verify --timeout 30s
	if [ -n "$min_version" ]; then
		set -- "$@" --min-version "$min_version"
	fi
	out=$("$bin" "$@" 2>/dev/null </dev/null)
	status=$?
	failed='ctrld-install: verify failed: stage='
	word=STATUS_FAILED
	case $out in
	*"ctrld-install: verify succeeded (exit 0)")
		if [ "$status" -eq 0 ]; then
			word=OK
		fi
		;;
	*"ctrld-install: not installed (exit 54)")
		word=NOT_INSTALLED
		;;
	*"$failed"*)
		# The code of the last failure line.
		word=${out##*"$failed"}
		word=${word#* code=}
		word=${word%% *}
		;;
	esac
fi
# Only a word of capitals and underscores is passed on, so nothing but a
# code can reach the inventory.
case $word in
'' | *[!ABCDEFGHIJKLMNOPQRSTUVWXYZ_]*)
	word=STATUS_FAILED
	;;
esac
# --- end of the verify word block ---
echo "<result>$word</result>"
exit 0
