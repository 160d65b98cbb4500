#!/bin/sh
# Jamf Pro Extension Attribute (Data Type: String, Input Type: Script):
# the code of ctrld-install's last recorded outcome, for Smart Groups and
# reports per failure code.
#
# Prints exactly one line, <result>WORD</result>, where WORD is a registered
# code (OK, LISTENER_BIND_FAILED, ...) or one of the words status uses when
# there is no final outcome (NEVER_RUN, RUNNING, INVALID_RECORD), or, from
# this script:
#   NOT_INSTALLED    ctrld-install is not at /usr/local/bin/ctrld-install
#   STATUS_FAILED    ctrld-install ran but printed no usable answer
# It always exits 0: Jamf stores the text, not the status.
#
# CTRLD_INSTALL_BIN overrides the path below for the tests.

bin=${CTRLD_INSTALL_BIN:-/usr/local/bin/ctrld-install}
PATH=$PATH:/usr/bin:/bin:/usr/sbin:/sbin

if [ ! -x "$bin" ]; then
	echo '<result>NOT_INSTALLED</result>'
	exit 0
fi
out=$("$bin" status --format jamf-ea 2>/dev/null </dev/null)
word=${out#"<result>"}
word=${word%"</result>"}
# Only a word of capitals and underscores is passed on, so nothing but a
# code can reach Jamf's inventory.
case $word in
'' | *[!ABCDEFGHIJKLMNOPQRSTUVWXYZ_]*)
	word=STATUS_FAILED
	;;
esac
if [ "$out" != "<result>$word</result>" ]; then
	word=STATUS_FAILED
fi
echo "<result>$word</result>"
exit 0
