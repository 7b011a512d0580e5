#!/bin/sh
# Docs generated from the code's tables stay equal to them: docs/REFERENCE.md's model
# keys are `arsim model keys --markdown`, its command blocks each command's --help, its
# result columns the header arsim writes. Run by `make check` (TESTS).
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
# Each command's --help, as docs/REFERENCE.md quotes it.
for c in $("$bin" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }'); do
    sed -n "/^<!-- arsim $c --help -->\$/,/^<!-- end of arsim $c --help -->\$/p" "$srcdir/docs/REFERENCE.md" |
        sed '1,2d' | sed '$d' | sed '$d' >"$tmp/doc"
    "$bin" "$c" --help >"$tmp/code" 2>&1
    if ! cmp -s "$tmp/doc" "$tmp/code"; then
        echo "docs: FAIL: docs/REFERENCE.md's 'arsim $c --help' differs from the binary's (or is missing):" >&2
        diff "$tmp/doc" "$tmp/code" | head -10 >&2
        exit 1
    fi
done
echo "docs: docs/REFERENCE.md quotes every command's --help as the binary prints it"
# The result columns, in the order arsim writes them.
sed -n '/^<!-- arsim result columns -->$/,/^<!-- end of arsim result columns -->$/p' "$srcdir/docs/REFERENCE.md" |
    grep '^| `' | sed 's/^| `\([^`]*\)`.*/\1/' | tr '\n' ',' | sed 's/,$//' >"$tmp/doc"
"$bin" run --backend analytic --topology ring_1d:2 --algo ring --size 8K -q --csv - 2>/dev/null | head -n 1 |
    tr -d '\n' >"$tmp/code"
if ! cmp -s "$tmp/doc" "$tmp/code"; then
    echo "docs: FAIL: docs/REFERENCE.md's result columns are not arsim's: $(cat "$tmp/doc") vs $(cat "$tmp/code")" >&2
    exit 1
fi
echo "docs: docs/REFERENCE.md lists the result columns arsim writes"
