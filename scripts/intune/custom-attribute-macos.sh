#!/bin/sh
# Intune custom attribute for macOS (Devices > macOS > Custom attributes;
# data type String): ctrld's state now, as `ctrld-install verify
# --min-version` finds it. Intune runs it about every 8 hours and shows the
# word in the attribute's Result column, one row per Mac, exportable; the
# shell script's own status shows only its first run (docs/mdm/intune.md).
#
# Set min_version to the ctrld version the package carries (for example
# 1.5.0, as `ctrld --version` prints it); empty, any version is current.
#
# Prints exactly one word: OK (provisioned, running, current),
# NOT_INSTALLED (never provisioned, or no ctrld-install: a state), a verify
# code (SERVICE_NOT_RUNNING, CTRLD_VERSION_UNSUPPORTED, ...: ctrld-install
# explain CODE), or STATUS_FAILED (no usable answer). It always exits 0:
# Intune stores the text, and a non-zero status would show as an error
# instead of the word. verify starts and changes nothing.
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
echo "$word"
exit 0
