#!/usr/bin/env bash
# Builds the release binaries of one commit into one directory:
#
#   ctrld-install_<version>_darwin_amd64      ctrld-install_<version>_linux_amd64
#   ctrld-install_<version>_darwin_arm64      ctrld-install_<version>_linux_arm64
#   ctrld-install_<version>_darwin_universal  ctrld-install_<version>_windows_amd64.exe
#   SHA256SUMS                                ctrld-install_<version>_windows_arm64.exe
#
# and the packages built from them (--packages, docs/mdm/pkg.md):
#
#   ctrld-install_<version>_darwin_universal.pkg   payload only: the binary in /usr/local/bin
#   ctrld-install_<version>_darwin_uninstall.pkg   payload-free: runs ctrld-install uninstall
#   ctrld-install_<version>_linux_amd64.deb        ctrld-install_<version>_linux_arm64.deb
#
# every file's time the commit's. The MSI (scripts/msi/build-msi.sh) is not
# among them: wixl stamps each build with a random package code and the
# time, and a release is byte for byte the same every time it is built.
#
# The sources are the commit's own files, exported with git archive, so
# uncommitted changes never reach a release and two builds of the same
# commit with the same Go release are byte-identical: static (CGO_ENABLED=0),
# -trimpath, no VCS settings, no build ID, the version and commit stamped
# with -X. Outside a git checkout (a source tarball) the tree is built as it
# is and --commit must say which commit it is.
#
# The binaries are unsigned. Signing (codesign and notarisation, Windows
# Authenticode) changes their bytes: sign after checking that SHA256SUMS
# reproduces.
#
# usage: scripts/release.sh [--out DIR] [--ref REF] [--version V] [--commit C]
#                           [--targets "GOOS/GOARCH ..."] [--packages "pkg deb"]
set -euo pipefail

prog=release.sh
all_targets="darwin/amd64 darwin/arm64 linux/amd64 linux/arm64 windows/amd64 windows/arm64"
all_packages="pkg deb"

usage() {
	cat <<EOF
usage: scripts/release.sh [flags]

  --out DIR        where the binaries and SHA256SUMS go; must be empty or absent (default: dist)
  --ref REF        the commit to build (default: HEAD)
  --version V      version to stamp (default: the commit's v* tag as git describe gives it,
                   without the v; 0.0.0-dev when no tag precedes it)
  --commit C       commit to stamp when building outside a git checkout
  --targets LIST   GOOS/GOARCH pairs, space-separated (default: $all_targets);
                   the universal macOS binary is made when both darwin targets are built
  --packages LIST  packages to build from the binaries, space-separated (default: $all_packages):
                   pkg (with both darwin targets), deb (one per linux target, needs dpkg-deb);
                   "" builds none. Outside a git checkout the packages' file times are
                   \$SOURCE_DATE_EPOCH (default 2000-01-01); in one, the commit's
EOF
}

die() {
	echo "$prog: error: $*" >&2
	exit 1
}

usage_error() {
	echo "$prog: error: $*" >&2
	usage >&2
	exit 2
}

repo=$(cd "$(dirname "$0")/.." && pwd)
out=
ref=HEAD
version=
commit=
targets=$all_targets
packages=$all_packages

while [ $# -gt 0 ]; do
	case $1 in
	--out | --ref | --version | --commit | --targets | --packages)
		[ $# -ge 2 ] || usage_error "$1 needs a value"
		case $1 in
		--packages) packages=$2 ;;
		--out) out=$2 ;;
		--ref) ref=$2 ;;
		--version) version=$2 ;;
		--commit) commit=$2 ;;
		--targets) targets=$2 ;;
		esac
		shift 2
		;;
	-h | --help)
		usage
		exit 0
		;;
	*) usage_error "unknown argument $1" ;;
	esac
done

[ -n "$out" ] || out=$repo/dist
command -v go >/dev/null 2>&1 || die "the go command is not on PATH"

for t in $targets; do
	case " $all_targets " in
	*" $t "*) ;;
	*) usage_error "unknown target $t (known: $all_targets)" ;;
	esac
done
[ -n "${targets// /}" ] || usage_error "--targets names no target"
for p in $packages; do
	case " $all_packages " in
	*" $p "*) ;;
	*) usage_error "unknown package $p (known: $all_packages)" ;;
	esac
done
# has WORD LIST: whether the space-separated LIST holds WORD.
has() {
	case " $2 " in
	*" $1 "*) return 0 ;;
	esac
	return 1
}
if has deb "$packages"; then
	for t in $targets; do
		case $t in
		linux/*) command -v dpkg-deb >/dev/null 2>&1 || die "the deb package needs dpkg-deb; install dpkg or pass --packages without deb" ;;
		esac
	done
fi

# Versions and commits end up in file names and in -X flags: keep them to
# characters that are safe in both.
safe_word() {
	case $1 in
	"" | *[!A-Za-z0-9._+-]*) return 1 ;;
	esac
}
[ -z "$version" ] || safe_word "$version" || usage_error "--version may hold only letters, digits and . _ + -"
[ -z "$commit" ] || safe_word "$commit" || usage_error "--commit may hold only letters, digits and . _ + -"

if [ -e "$out" ]; then
	[ -d "$out" ] || die "$out exists and is not a directory"
	[ -z "$(ls -A "$out")" ] || die "$out is not empty; remove it or choose another --out"
fi

if git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
	[ -z "$commit" ] || usage_error "--commit is only for builds outside a git checkout; use --ref"
	full=$(git -C "$repo" rev-parse --verify --quiet "$ref^{commit}") || die "$ref is not a commit"
	commit=${full:0:12}
	# The packages' file times: the commit's, the same on every build.
	epoch=$(git -C "$repo" log -1 --format=%ct "$full")
	if [ -z "$version" ]; then
		# v1.2.0, or v1.2.0-3-g<commit> past the tag; 0.0.0-dev before any.
		version=$(git -C "$repo" describe --tags --match 'v[0-9]*' --abbrev=12 "$full" 2>/dev/null) || version=0.0.0-dev
		version=${version#v}
		safe_word "$version" || die "the tag gives a version that is unsafe in a file name; give --version"
	fi
else
	full=
	epoch=${SOURCE_DATE_EPOCH:-946684800}
	case $epoch in *[!0-9]*) usage_error "SOURCE_DATE_EPOCH must be a whole number of seconds" ;; esac
	[ -n "$commit" ] || usage_error "outside a git checkout, --commit must name the commit being built"
	[ -n "$version" ] || usage_error "outside a git checkout, --version is required"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/ctrld-install-release.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -n "$full" ]; then
	src=$work/src
	mkdir "$src"
	git -C "$repo" archive --format=tar "$full" | tar -x -C "$src"
else
	src=$repo
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

# Everything that could make two builds differ is fixed here rather than
# taken from the caller's environment.
build_env=(
	CGO_ENABLED=0
	GOFLAGS=-mod=readonly
	GOTOOLCHAIN=local
	GOAMD64=v1
	GOARM64=v8.0
	GOEXPERIMENT=
)
ldflags="-s -w -buildid= -X main.version=$version -X main.commitStamp=$commit"

echo "$prog: ctrld-install $version (commit $commit) with $(go env GOVERSION)"
for t in $targets; do
	goos=${t%/*}
	goarch=${t#*/}
	name=ctrld-install_${version}_${goos}_${goarch}
	[ "$goos" != windows ] || name=$name.exe
	(cd "$src" && env "${build_env[@]}" GOOS="$goos" GOARCH="$goarch" \
		go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$out/$name" ./cmd/ctrld-install) ||
		die "building $t failed"
	echo "$prog: built $name"
done

case " $targets " in
*" darwin/amd64 "*)
	case " $targets " in
	*" darwin/arm64 "*)
		name=ctrld-install_${version}_darwin_universal
		(cd "$src" && env "${build_env[@]}" go run ./internal/machofat/cmd/machofat -o "$out/$name" \
			"$out/ctrld-install_${version}_darwin_amd64" "$out/ctrld-install_${version}_darwin_arm64") ||
			die "joining the darwin binaries failed"
		echo "$prog: built $name"
		;;
	esac
	;;
esac

universal=$out/ctrld-install_${version}_darwin_universal
if has pkg "$packages" && [ -f "$universal" ]; then
	name=ctrld-install_${version}_darwin_universal.pkg
	(cd "$src" && env "${build_env[@]}" go run ./internal/tools/mkpkg --ctrld-install "$universal" \
		--version "$version" --payload-only --mtime "$epoch" --output "$out/$name") >/dev/null ||
		die "building $name failed"
	echo "$prog: built $name"
	name=ctrld-install_${version}_darwin_uninstall.pkg
	(cd "$src" && env "${build_env[@]}" go run ./internal/tools/mkpkg --uninstall \
		--version "$version" --mtime "$epoch" --output "$out/$name") >/dev/null ||
		die "building $name failed"
	echo "$prog: built $name"
fi
if has deb "$packages"; then
	for t in $targets; do
		case $t in
		linux/*) ;;
		*) continue ;;
		esac
		arch=${t#*/}
		name=ctrld-install_${version}_linux_${arch}.deb
		SOURCE_DATE_EPOCH=$epoch bash "$src/scripts/deb/build-deb.sh" --ctrld-install "$out/ctrld-install_${version}_linux_${arch}" \
			--version "$version" --arch "$arch" --output "$out/$name" >/dev/null || die "building $name failed"
		echo "$prog: built $name"
	done
fi

if command -v sha256sum >/dev/null 2>&1; then
	sum=(sha256sum)
elif command -v shasum >/dev/null 2>&1; then
	sum=(shasum -a 256)
else
	die "neither sha256sum nor shasum is on PATH"
fi
(
	cd "$out"
	# A fixed order, whatever the locale.
	LC_ALL=C
	export LC_ALL
	set -- ctrld-install_*
	"${sum[@]}" "$@" >SHA256SUMS
) || die "writing SHA256SUMS failed"
echo "$prog: wrote $out/SHA256SUMS"
