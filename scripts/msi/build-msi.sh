#!/usr/bin/env bash
# Builds the Windows Installer package of ctrld-install (x64), and of ctrld
# when given, with wixl (Debian: apt-get install wixl) from
# ctrld-install.wxs beside this script.
#
# usage: scripts/msi/build-msi.sh --ctrld-install PATH --version V
#                                 [--ctrld PATH] [--output FILE]
#
#   --ctrld-install PATH  ctrld-install.exe built for windows/amd64
#   --version V           ctrld-install's version; the MSI's is its first
#                         three numbers (1.2.0-3-gabc installs as 1.2.0)
#   --ctrld PATH          ctrld.exe for windows/amd64, installed beside it
#   --output FILE         default ctrld-install_<version>_windows_amd64.msi
#
# Not reproducible: wixl stamps each build with a random package code and
# the time. docs/mdm/pkg.md ("The Windows package") says what it does.
set -euo pipefail

me='ctrld-install-build-msi'
die() {
	printf '%s: error: %s\n' "$me" "$1" >&2
	exit 1
}
usage_error() {
	printf '%s: error: %s\n' "$me" "$1" >&2
	exit 2
}

installer=
ctrld=
version=
output=
while [ $# -gt 0 ]; do
	case $1 in
	--ctrld-install | --ctrld | --version | --output)
		[ $# -ge 2 ] || usage_error "$1 needs a value"
		case $1 in
		--ctrld-install) installer=$2 ;;
		--ctrld) ctrld=$2 ;;
		--version) version=$2 ;;
		--output) output=$2 ;;
		esac
		shift 2
		;;
	-h | --help)
		sed -n '2,/^set -e/{/^set -e/d;s/^# \{0,1\}//;p}' "$0"
		exit 0
		;;
	*) usage_error "an unknown argument was given; see --help" ;;
	esac
done
if [ -z "$installer" ] || [ -z "$version" ]; then
	usage_error "--ctrld-install and --version are required"
fi
[ -f "$installer" ] || usage_error "the --ctrld-install file does not exist"
[ -z "$ctrld" ] || [ -f "$ctrld" ] || usage_error "the --ctrld file does not exist"
case $version in
*[!0-9A-Za-z.+-]* | '') usage_error "the version may hold only letters, digits, dots, plus and minus signs" ;;
esac
# Windows Installer compares major.minor.build, each at most 255.255.65535.
if [[ ! $version =~ ^([0-9]+)\.([0-9]+)\.([0-9]+) ]]; then
	usage_error "the version must start with three numbers, such as 1.2.3"
fi
major=$((10#${BASH_REMATCH[1]}))
minor=$((10#${BASH_REMATCH[2]}))
build=$((10#${BASH_REMATCH[3]}))
if [ "$major" -gt 255 ] || [ "$minor" -gt 255 ] || [ "$build" -ge 65535 ]; then
	usage_error "the version's numbers are too large for Windows Installer (255.255.65534)"
fi
command -v wixl >/dev/null 2>&1 || die "wixl is missing (Debian and Ubuntu: apt-get install wixl msitools)"
[ -n "$output" ] || output=ctrld-install_${version}_windows_amd64.msi
here=$(cd "$(dirname "$0")" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/ctrld-msi.XXXXXX")
trap 'rm -rf "$work"' EXIT
# wixl takes the files' paths relative to the source file's folder.
cp "$here/ctrld-install.wxs" "$work/"
cp "$installer" "$work/ctrld-install.exe"
with_ctrld=no
if [ -n "$ctrld" ]; then
	cp "$ctrld" "$work/ctrld.exe"
	with_ctrld=yes
fi
log=$work/wixl.log
if ! (cd "$work" && wixl -a x64 -D "Version=$major.$minor.$build" -D "NextVersion=$major.$minor.$((build + 1))" \
	-D "WithCtrld=$with_ctrld" -o out.msi ctrld-install.wxs) >"$log" 2>&1; then
	cat "$log" >&2
	die "wixl failed"
fi
# wixl warns through GLib about the WiX attributes it does not know; any
# warning means the package is not what the source says.
if grep -q -e WARNING -e CRITICAL "$log"; then
	cat "$log" >&2
	die "wixl warned about the source"
fi
# wixl drops HideTarget: set msidbCustomActionTypeHideTarget (0x2000) on
# the actions that run ctrld-install (deferred 0x400, no impersonation
# 0x800, an installed executable 18), so that Windows Installer never logs
# their command lines, which may hold the token.
command -v msibuild >/dev/null 2>&1 || die "msibuild is missing (Debian and Ubuntu: apt-get install msitools)"
sql() {
	msibuild "$work/out.msi" -q "$1" >"$log" 2>&1 || {
		cat "$log" >&2
		die "msibuild could not $2"
	}
}
# shellcheck disable=SC2016 # SQL's quotes, not the shell's
sql 'UPDATE `CustomAction` SET `Type` = 11282 WHERE `Type` = 3090' "mark the custom actions hidden"
if [ "$with_ctrld" = yes ]; then
	# wixl drops a Component's Condition. The component that stops and
	# starts ctrld's service around the replacement of ctrld.exe is
	# installed only when that service exists (AppSearch found its
	# ImagePath): at a first installation ctrld-install registers the
	# service later, and Windows Installer would fail to start a service
	# that is not there.
	# shellcheck disable=SC2016
	sql "UPDATE \`Component\` SET \`Condition\` = 'CTRLD_SERVICE' WHERE \`Component\` = 'Service'" "make the service's component conditional"
fi
# Go's executables carry no version resource, and Windows Installer keeps
# an unversioned file that looks modified since it was installed (written
# after its creation, as a build ctrld-install kept and put back is):
# the package's version in the File table makes both files versioned, and
# a versioned file always replaces an unversioned one, so every upgrade
# lays both.
# shellcheck disable=SC2016
sql "UPDATE \`File\` SET \`Version\` = '$major.$minor.$build.0', \`Language\` = '0'" "version the files"
mv "$work/out.msi" "$output"
printf '%s: built %s\n' "$me" "$output"
