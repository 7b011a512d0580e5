#!/bin/sh
# Docs generated from the code's tables stay equal to them: the model keys of
# docs/REFERENCE.md are `arsim model keys --markdown`. Run by `make check` (TESTS).
set -u
bin=${ARSIM:-./arsim}
srcdir=${srcdir:-.}
[ -x "$bin" ] || { echo "docs: no $bin" >&2; exit 99; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/arsim-docs-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
sed -n '/^<!-- arsim model keys --markdown -->$/,/^<!-- end of arsim model keys -->$/p' "$srcdir/docs/REFERENCE.md" |
    sed '1d;$d' >"$tmp/doc"
"$bin" model keys --markdown >"$tmp/code"
if ! cmp -s "$tmp/doc" "$tmp/code"; then
    echo "docs: FAIL: docs/REFERENCE.md's model keys differ from 'arsim model keys --markdown':" >&2
    diff "$tmp/doc" "$tmp/code" | head -20 >&2
    exit 1
fi
echo "docs: docs/REFERENCE.md's model keys are the key table's ($(wc -l <"$tmp/code") lines)"
