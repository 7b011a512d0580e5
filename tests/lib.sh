# Sourced by the test scripts: `arsim_test NAME` sets bin (the arsim under test, an
# absolute path: $ARSIM, else ./arsim; exit 99 when missing), tmp (a folder removed on
# exit) and fail (one line on stderr, exit 1).
arsim_test() {
    name=$1
    bin=${ARSIM:-./arsim}
    [ -x "$bin" ] || { echo "$name: no $bin" >&2; exit 99; }
    bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/arsim-$name-XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
}
fail() { echo "$name: FAIL: $*" >&2; exit 1; }
