# shellcheck shell=sh
# The runner's watcher (watcher_unix.go runs it with /bin/sh -c, comments
# stripped). It leads ctrld's process group, outside ctrld-install's, with
# an empty environment but PATH; its stdin is a pipe only ctrld-install can
# write to, its stdout a pipe ctrld-install reads once.

# SIGTERM is how ctrld-install stops ctrld's group: the watcher must outlive
# it, to finish the job should ctrld-install die in the grace period. SIGINT
# and SIGHUP reach a group from a terminal.
trap '' TERM INT HUP
# Ready: every signal meant for the group is handled. ctrld-install reads
# this one byte and closes its end.
printf R

# Armed, with the grace period in seconds: ctrld is joining the group. The
# end of the pipe before that, or anything else: there is nothing to guard.
IFS= read -r msg || exit 0
case $msg in
G*) grace=${msg#G} ;;
*) exit 0 ;;
esac
case $grace in
'' | *[!0-9.]*) grace=3 ;;
esac

# Told to stand down (ctrld exited by itself, and its group may hold the
# daemon), or the pipe's end: ctrld-install is gone, however it ended.
IFS= read -r msg
if [ "$msg" = D ]; then
	exit 0
fi
kill -s TERM 0
sleep "$grace"
kill -s KILL 0
