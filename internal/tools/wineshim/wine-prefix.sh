#!/usr/bin/env bash
# wine-prefix.sh PREFIX: make a Wine prefix at PREFIX (an absolute path,
# created if missing) that runs Go 1.26 programs: wineboot's default
# prefix, with bcryptprimitives.dll from dll/bcryptprimitives.c in system32
# (see README.md). Needs Debian's wine64 and gcc-mingw-w64-x86-64.
#
# WINE (default /usr/lib/wine/wine64) and MINGW_CC (default
# x86_64-w64-mingw32-gcc) may name other binaries.
set -euo pipefail

if [ $# -ne 1 ] || [ "${1#/}" = "$1" ]; then
	echo "usage: wine-prefix.sh ABSOLUTE-PREFIX-PATH" >&2
	exit 2
fi
prefix=$1
here=$(cd "$(dirname "$0")" && pwd)
wine=${WINE:-/usr/lib/wine/wine64}
cc=${MINGW_CC:-x86_64-w64-mingw32-gcc}
wineserver="$(dirname "$wine")/wineserver"

build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
"$cc" -O2 -Wall -Wextra -Werror -shared -s -o "$build/bcryptprimitives.dll" \
	"$here/dll/bcryptprimitives.c" -ladvapi32

mkdir -p "$prefix"
export WINEPREFIX="$prefix"
export WINEDEBUG="${WINEDEBUG:--all}"
# wineboot complains on stderr about the 32-bit half Debian's wine64 lacks;
# the 64-bit prefix it makes is complete.
"$wine" wineboot --init >"$build/wineboot.log" 2>&1 || {
	cat "$build/wineboot.log" >&2
	exit 1
}
"$wineserver" -w
system32="$prefix/drive_c/windows/system32"
if [ ! -d "$system32" ]; then
	echo "wine-prefix.sh: wineboot made no $system32" >&2
	exit 1
fi
cp "$build/bcryptprimitives.dll" "$system32/bcryptprimitives.dll"
echo "wine-prefix.sh: $prefix is ready"
