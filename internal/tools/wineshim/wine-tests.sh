#!/usr/bin/env bash
# wine-tests.sh PREFIX OUTDIR [PACKAGE...]: run the Windows build's tests
# under Wine. Builds the test binaries of the packages (by default every
# package of the module with tests for Windows) with GOOS=windows
# go test -c into OUTDIR, runs each under Wine in its package's directory,
# prints one line per package and the Wine-only skips with their reasons,
# and exits 1 if any binary fails. PREFIX is a prefix wine-prefix.sh made;
# both paths are absolute.
#
# With cmd/ctrld-install among the packages it also builds ctrld-install.exe
# and the stand-in ctrld for its end-to-end tests, and names their
# directory in CTRLD_INSTALL_WINDOWS_E2E.
set -euo pipefail

if [ $# -lt 2 ] || [ "${1#/}" = "$1" ] || [ "${2#/}" = "$2" ]; then
	echo "usage: wine-tests.sh ABSOLUTE-PREFIX ABSOLUTE-OUTDIR [PACKAGE...]" >&2
	exit 2
fi
prefix=$1
out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
wine=${WINE:-/usr/lib/wine/wine64}
wineserver="$(dirname "$wine")/wineserver"
# Each binary's own limit, and a kill a little later should Wine hang.
test_timeout=${WINE_TEST_TIMEOUT:-300s}

cd "$root"
if [ $# -eq 0 ]; then
	set -- ./...
fi
# "import path<TAB>directory" of each package with tests on Windows.
mapfile -t pkgs < <(GOOS=windows go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}	{{.Dir}}{{end}}' "$@")
if [ ${#pkgs[@]} -eq 0 ]; then
	echo "wine-tests.sh: no package with tests for Windows in $*" >&2
	exit 2
fi
imports=()
for p in "${pkgs[@]}"; do
	imports+=("${p%%	*}")
done

mkdir -p "$out/tests"
started=$(date +%s)
GOOS=windows go test -c -o "$out/tests/" "${imports[@]}"

# A Windows path for a Unix one: Wine maps drive Z: to /.
winpath() { printf 'Z:%s' "${1//\//\\}"; }

export WINEPREFIX="$prefix"
export WINEDEBUG="${WINEDEBUG:--all}"
export CTRLD_INSTALL_UNDER_WINE=1
# Every test of the binary, not only the ones go test ./... runs here.
export CTRLD_INSTALL_E2E_FULL=1
for p in "${imports[@]}"; do
	if [ "$p" = "github.com/Control-D-Inc/ctrld-install/cmd/ctrld-install" ]; then
		mkdir -p "$out/e2e"
		GOOS=windows CGO_ENABLED=0 go build -trimpath -o "$out/e2e/" ./cmd/ctrld-install ./bench/cmd/fakectrld
		CTRLD_INSTALL_WINDOWS_E2E=$(winpath "$out/e2e")
		export CTRLD_INSTALL_WINDOWS_E2E
	fi
done
built=$(date +%s)
echo "built ${#imports[@]} Windows test binaries in $((built - started))s"

# A warm wineserver: each exe then starts in tens of milliseconds, not
# the second a cold server takes.
"$wineserver" -p
trap '"$wineserver" -k 2>/dev/null || true' EXIT

failed=()
for p in "${pkgs[@]}"; do
	import=${p%%	*}
	dir=${p#*	}
	bin="$out/tests/${import##*/}.test.exe"
	log="$out/tests/${import##*/}.log"
	t0=$(date +%s%N)
	rc=0
	(cd "$dir" && timeout --kill-after=10s "$((${test_timeout%s} + 30))s" \
		"$wine" "$bin" -test.v -test.count=1 -test.timeout="$test_timeout") >"$log" 2>&1 || rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	if [ $rc -eq 0 ]; then
		printf 'ok   %-60s %5d ms\n' "$import" "$ms"
	else
		printf 'FAIL %-60s %5d ms (exit %d)\n' "$import" "$ms" "$rc"
		grep -v -e '^=== ' -e '^    --- PASS' -e '^--- PASS' "$log" || true
		failed+=("$import")
	fi
	# Every skip under Wine with the reason its test gave, which -test.v
	# prints on the line before.
	grep -B1 -e '--- SKIP' "$log" | grep -v -e '^--$' | paste - - |
		sed -e 's/^ *\([^ ]*\)\( .*\)	 *--- SKIP: \([^ ]*\) .*/     skip \3:\2/' || true
done
echo "ran the Windows tests under Wine in $(($(date +%s) - built))s (building took $((built - started))s)"
if [ ${#failed[@]} -ne 0 ]; then
	echo "wine-tests.sh: ${#failed[@]} failed: ${failed[*]}" >&2
	exit 1
fi
