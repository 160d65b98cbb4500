#!/usr/bin/env bash
# Builds the Linux package (.deb) of ctrld-install, and of ctrld when
# given, with dpkg-deb: byte for byte the same for the same input (one
# fixed time, root:root, dpkg-deb's sorted tar members).
#
# usage: scripts/deb/build-deb.sh --ctrld-install PATH --version V --arch ARCH
#                                 [--ctrld PATH] [--output FILE] [--maintainer "NAME <MAIL>"]
#
#   --ctrld-install PATH  ctrld-install built for Linux and ARCH
#   --version V           ctrld-install's version; a minus sign becomes a plus
#                         (1.2.0-3-gabc is 1.2.0+3+gabc, after 1.2.0)
#   --arch ARCH           the Debian architecture: amd64 or arm64
#   --ctrld PATH          ctrld for the same architecture, laid beside
#                         ctrld-install, which then runs it by default
#   --output FILE         default ctrld-install_<version>_<arch>.deb
#   --maintainer TEXT     the Maintainer field
#
# The package (docs/mdm/pkg.md, "The Linux package"):
#   /usr/sbin/ctrld-install   0755
#   /usr/sbin/ctrld           0755   with --ctrld
#   postinst  provisions when /etc/ctrld-install/token or resolver exists
#   prerm     ctrld-install uninstall on removal
#   postrm    a purge deletes /etc/ctrld-install
# SOURCE_DATE_EPOCH, when set, is every file's time (default 2000-01-01).
set -euo pipefail

me='ctrld-install-build-deb'
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
arch=
output=
maintainer='Control D <support@controld.com>'
while [ $# -gt 0 ]; do
	case $1 in
	--ctrld-install | --ctrld | --version | --arch | --output | --maintainer)
		[ $# -ge 2 ] || usage_error "$1 needs a value"
		case $1 in
		--ctrld-install) installer=$2 ;;
		--ctrld) ctrld=$2 ;;
		--version) version=$2 ;;
		--arch) arch=$2 ;;
		--output) output=$2 ;;
		--maintainer) maintainer=$2 ;;
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
if [ -z "$installer" ] || [ -z "$version" ] || [ -z "$arch" ]; then
	usage_error "--ctrld-install, --version and --arch are required"
fi
[ -f "$installer" ] || usage_error "the --ctrld-install file does not exist"
[ -z "$ctrld" ] || [ -f "$ctrld" ] || usage_error "the --ctrld file does not exist"
case $version in
[0-9]*) case $version in *[!0-9A-Za-z.+-]*) usage_error "the version may hold only letters, digits, dots, plus and minus signs" ;; esac ;;
*) usage_error "the version must start with a digit" ;;
esac
case $arch in
amd64 | arm64) ;;
*) usage_error "--arch must be amd64 or arm64" ;;
esac
case $maintainer in
*[![:print:]]* | '') usage_error "--maintainer must be one line" ;;
esac
command -v dpkg-deb >/dev/null 2>&1 || die "dpkg-deb is missing (Debian and Ubuntu: apt-get install dpkg)"
debversion=${version//-/+}
[ -n "$output" ] || output=ctrld-install_${debversion}_${arch}.deb
mtime=${SOURCE_DATE_EPOCH:-946684800}
case $mtime in '' | *[!0-9]*) usage_error "SOURCE_DATE_EPOCH must be a whole number of seconds" ;; esac
here=$(cd "$(dirname "$0")" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/ctrld-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
stage=$work/stage
umask 022
mkdir -p "$stage/DEBIAN" "$stage/usr/sbin" "$stage/usr/share/doc/ctrld-install" "$stage/usr/share/lintian/overrides"
install -m 0755 "$installer" "$stage/usr/sbin/ctrld-install"
[ -z "$ctrld" ] || install -m 0755 "$ctrld" "$stage/usr/sbin/ctrld"
install -m 0755 "$here/postinst.sh" "$stage/DEBIAN/postinst"
install -m 0755 "$here/prerm.sh" "$stage/DEBIAN/prerm"
install -m 0755 "$here/postrm.sh" "$stage/DEBIAN/postrm"
install -m 0644 "$here/copyright" "$stage/usr/share/doc/ctrld-install/copyright"
install -m 0644 "$here/lintian-overrides" "$stage/usr/share/lintian/overrides/ctrld-install"
if [ -n "$ctrld" ]; then
	# ctrld is a Go program too, and has no manual page of its own.
	sed 's|usr/sbin/ctrld-install|usr/sbin/ctrld|' "$here/lintian-overrides" |
		grep -v '^#' >>"$stage/usr/share/lintian/overrides/ctrld-install"
fi
{
	printf 'ctrld-install (%s) stable; urgency=medium\n\n' "$debversion"
	printf '  * ctrld-install %s.\n\n' "$version"
	printf ' -- %s  %s\n' "$maintainer" "$(LC_ALL=C date -u -d "@$mtime" '+%a, %d %b %Y %H:%M:%S +0000')"
} | gzip -9n >"$stage/usr/share/doc/ctrld-install/changelog.gz"
chmod 0644 "$stage/usr/share/doc/ctrld-install/changelog.gz"

(cd "$stage" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/md5sums"
size=$(du -k -s --apparent-size "$stage/usr" | cut -f1)
cat >"$stage/DEBIAN/control" <<CONTROL
Package: ctrld-install
Version: $debversion
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Section: net
Priority: optional
Homepage: https://github.com/Control-D-Inc/ctrld-install
Description: provisions Control D's DNS agent ctrld
 ctrld-install provisions ctrld, Control D's DNS agent, for MDM and RMM
 tools, and reports one stable failure code on every surface: its exit
 status, one final line in the log, an outcome record and JSON.
 .
 With a provisioning token in /etc/ctrld-install/token the package
 provisions ctrld when it is installed; removing it removes ctrld.
CONTROL
find "$stage" -exec touch -h -d "@$mtime" {} +
SOURCE_DATE_EPOCH=$mtime dpkg-deb --root-owner-group -Zxz --build "$stage" "$work/out.deb" >/dev/null
mv "$work/out.deb" "$output"
printf '%s: built %s\n' "$me" "$output"
