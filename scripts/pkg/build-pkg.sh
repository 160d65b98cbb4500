#!/bin/sh
# Builds the macOS package that installs ctrld and ctrld-install and, unless
# --payload-only, provisions ctrld in its postinstall.
#
# Usage:
#   build-pkg.sh --ctrld PATH --ctrld-install PATH --version V
#                [--token-file PATH | --resolver-file PATH | --payload-only]
#                [--identifier ID] [--sign IDENTITY] [--output FILE]
#                [--stage-only DIR]
#
#   --ctrld PATH          the ctrld binary for macOS (universal or per arch)
#   --ctrld-install PATH  the ctrld-install binary for macOS
#   --version V           the package version
#   --token-file PATH     put the provisioning token in the package, as
#                         scripts/provision_token: the package is then a
#                         secret of that organisation
#   --resolver-file PATH  put a resolver ID in the package instead, as
#                         scripts/provision_resolver: a secret too
#   --payload-only        no postinstall: the package only lays the binaries
#                         and an MDM script (Jamf policy, Intune, RMM)
#                         provisions
#   --identifier ID       package identifier (default com.controld.ctrld)
#   --sign IDENTITY       sign with this "Developer ID Installer" identity;
#                         both binaries must already be signed with a
#                         "Developer ID Application" identity, the hardened
#                         runtime and a secure timestamp (codesign --options
#                         runtime --timestamp), or the notary service
#                         rejects the package: the script checks and refuses
#   --output FILE         the product archive (default ctrld-<version>.pkg)
#   --stage-only DIR      stage into DIR, which must not exist, and stop;
#                         runs anywhere, needs no pkgbuild
#
# Staged layout (the package's contents):
#   DIR/root/usr/local/bin/ctrld           0755  payload
#   DIR/root/usr/local/bin/ctrld-install   0755  payload
#   DIR/scripts/postinstall                0755  unless --payload-only
#   DIR/scripts/provision_token            0600  with --token-file
#   DIR/scripts/provision_resolver         0600  with --resolver-file
# The payload stays on the machine: the scripts under scripts/ and the
# inventory (Jamf extension attribute, Intune detection, Kandji audit) run
# /usr/local/bin/ctrld-install later.

me='ctrld-install-build-pkg'
PATH=$PATH:/usr/bin:/bin:/usr/sbin:/sbin

fail() {
	printf '%s: error: %s\n' "$me" "$1" >&2
	exit 1
}

ctrld=
installer=
version=
token=
resolver=
payload_only=
identifier=com.controld.ctrld
sign=
output=
stage_only=
while [ $# -gt 0 ]; do
	case $1 in
	--ctrld | --ctrld-install | --version | --token-file | --resolver-file | --identifier | --sign | --output | --stage-only)
		if [ $# -lt 2 ]; then
			fail "$1 needs a value"
		fi
		case $1 in
		--ctrld) ctrld=$2 ;;
		--ctrld-install) installer=$2 ;;
		--version) version=$2 ;;
		--token-file) token=$2 ;;
		--resolver-file) resolver=$2 ;;
		--identifier) identifier=$2 ;;
		--sign) sign=$2 ;;
		--output) output=$2 ;;
		--stage-only) stage_only=$2 ;;
		esac
		shift 2
		;;
	--payload-only)
		payload_only=1
		shift
		;;
	-h | --help)
		sed -n '2,/^$/s/^# \{0,1\}//p' "$0"
		exit 0
		;;
	*)
		# Not repeated: a token passed by mistake must not reach a CI log.
		fail "an unknown argument was given; see --help"
		;;
	esac
done

if [ -z "$ctrld" ] || [ -z "$installer" ] || [ -z "$version" ]; then
	fail "--ctrld, --ctrld-install and --version are required"
fi
if [ ! -f "$ctrld" ]; then
	fail "the --ctrld file does not exist"
fi
if [ ! -f "$installer" ]; then
	fail "the --ctrld-install file does not exist"
fi
case $version in
'' | *[!0-9A-Za-z.+-]*) fail "the version may contain only letters, digits, dots, plus and minus signs" ;;
esac
if [ -n "$token" ] && [ -n "$resolver" ]; then
	fail "--token-file and --resolver-file exclude each other"
fi
if [ -n "$token$resolver" ] && [ -n "$payload_only" ]; then
	fail "--token-file and --resolver-file exclude --payload-only"
fi
if [ -n "$token" ] && [ ! -f "$token" ]; then
	fail "the token file does not exist"
fi
if [ -n "$resolver" ] && [ ! -f "$resolver" ]; then
	fail "the resolver file does not exist"
fi
case $0 in
*/*) here=${0%/*} ;;
*) here=. ;;
esac
if [ -z "$payload_only" ] && [ ! -f "$here/postinstall" ]; then
	fail "postinstall is missing beside this script"
fi

# check_signed FILE NAME refuses a binary the notary service would reject.
# What codesign -dv prints is on stderr, and holds no secret.
check_signed() {
	if ! info=$(codesign -dv --verbose=4 "$1" 2>&1); then
		fail "$2 is not signed; sign it first: codesign --force --options runtime --timestamp --sign \"Developer ID Application: ...\" $2"
	fi
	if ! printf '%s\n' "$info" | grep -q '^CodeDirectory .*flags=0x[0-9a-f]*([^)]*runtime'; then
		fail "$2 is not signed with the hardened runtime (flags=0x10000(runtime)); sign it again with codesign --options runtime"
	fi
	if ! printf '%s\n' "$info" | grep -q '^Authority=Developer ID Application: '; then
		fail "$2 is not signed with a Developer ID Application certificate"
	fi
	if ! printf '%s\n' "$info" | grep -q '^Timestamp='; then
		fail "$2 has no secure timestamp; sign it again with codesign --timestamp"
	fi
}
if [ -n "$sign" ]; then
	if ! command -v codesign >/dev/null 2>&1; then
		fail "--sign needs codesign, which is only on macOS"
	fi
	check_signed "$ctrld" ctrld
	check_signed "$installer" ctrld-install
fi

if [ -z "$stage_only" ]; then
	if [ "$(uname -s)" != Darwin ] || ! command -v pkgbuild >/dev/null 2>&1 || ! command -v productbuild >/dev/null 2>&1; then
		fail "pkgbuild and productbuild are only on macOS; use --stage-only DIR to stage the package contents here"
	fi
fi

work=
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	if [ -n "$work" ]; then
		rm -rf "$work"
	fi
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -n "$stage_only" ]; then
	if [ -e "$stage_only" ]; then
		fail "the staging directory must not exist yet"
	fi
	stage=$stage_only
	mkdir -p "$stage" || fail "cannot create the staging directory"
else
	# Under a private directory: the staged scripts may hold the token or
	# the resolver ID.
	work=$(mktemp -d "${TMPDIR:-/tmp}/ctrld-pkg.XXXXXX") || fail "cannot create a temporary directory"
	stage=$work/stage
	mkdir "$stage" || fail "cannot create the staging directory"
fi

# stage_file SRC DST MODE copies without ever leaving DST readable by
# others on the way (the token goes through here).
stage_file() {
	(umask 077 && cp "$1" "$2") && chmod "$3" "$2"
}
bindir=$stage/root/usr/local/bin
mkdir -p "$bindir" || fail "cannot create the payload directory"
stage_file "$ctrld" "$bindir/ctrld" 0755 || fail "cannot stage ctrld"
stage_file "$installer" "$bindir/ctrld-install" 0755 || fail "cannot stage ctrld-install"
if [ -z "$payload_only" ]; then
	mkdir -p "$stage/scripts" || fail "cannot create the scripts directory"
	stage_file "$here/postinstall" "$stage/scripts/postinstall" 0755 || fail "cannot stage the postinstall"
	if [ -n "$token" ]; then
		stage_file "$token" "$stage/scripts/provision_token" 0600 || fail "cannot stage the token"
	elif [ -n "$resolver" ]; then
		stage_file "$resolver" "$stage/scripts/provision_resolver" 0600 || fail "cannot stage the resolver ID"
	else
		printf '%s: note: no --token-file: the postinstall will need CTRLD_PROVISION_TOKEN at install time\n' "$me" >&2
	fi
fi

if [ -n "$stage_only" ]; then
	printf '%s: staged in %s\n' "$me" "$stage_only"
	exit 0
fi

if [ -z "$output" ]; then
	output=ctrld-$version.pkg
fi
set -- --root "$stage/root" --identifier "$identifier" --version "$version" --install-location /
if [ -z "$payload_only" ]; then
	set -- "$@" --scripts "$stage/scripts"
fi
pkgbuild "$@" "$work/component.pkg" || fail "pkgbuild failed"
set -- --package "$work/component.pkg"
if [ -n "$sign" ]; then
	set -- "$@" --sign "$sign"
fi
productbuild "$@" "$output" || fail "productbuild failed"
printf '%s: built %s\n' "$me" "$output"
