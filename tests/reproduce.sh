#!/bin/sh
# scripts/reproduce.sh writes only under its OUT folder: the committed data, results and
# figures are untouched (git status the same before and after), and OUT holds every
# figure. Skipped (77) outside a git checkout or without a python3 with matplotlib.
# Run by `make check` (about a minute on two cores).
set -u
. "${srcdir:-.}/tests/lib.sh"
arsim_test reproduce
top=$(cd "${srcdir:-.}" && pwd)
# only at the top of a checkout: a copy inside one (make distcheck, the sanitizer build) has
# no status of its own to compare
[ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" = "$top" ] ||
    { echo "reproduce: skipped (not the top of a git checkout)"; exit 77; }
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || python3 -c 'import matplotlib' 2>/dev/null ||
    { echo "reproduce: skipped (no python3 with matplotlib)"; exit 77; }
before=$(git -C "$top" status --porcelain)
ARSIM=$bin OUT=$tmp/out JOBS=2 sh "$top/scripts/reproduce.sh" >"$tmp/log" 2>&1
rc=$?
[ $rc = 0 ] || { tail -n 20 "$tmp/log" >&2; fail "reproduce.sh exited $rc"; }
after=$(git -C "$top" status --porcelain)
[ "$before" = "$after" ] || fail "reproduce.sh changed the tree: $(echo "$after" | head -5)"
n=$(ls "$tmp/out/figures"/*.png 2>/dev/null | wc -l)
[ "$n" -ge 10 ] || fail "reproduce.sh drew $n figures under OUT/figures"
for f in latency_bytes.csv latency_nelem.csv buffer_kind.csv h200_model.csv; do
    [ -s "$tmp/out/data/$f" ] || fail "no OUT/data/$f"
done
echo "reproduce: $n figures and every CSV under OUT; the tree unchanged"
