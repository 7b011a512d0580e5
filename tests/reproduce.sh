#!/bin/sh
# scripts/reproduce.sh writes only under its OUT folder: the committed data, results and
# figures are untouched (git status the same before and after), and OUT holds every
# figure. Skipped (77) outside a git checkout or without a python3 with matplotlib.
# Run by `make check` (about a minute on two cores).
set -u
. "${srcdir:-.}/tests/lib.sh"
arsim_test reproduce
top=$(cd "${srcdir:-.}" && pwd)
git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "reproduce: skipped (not a git checkout)"; exit 77; }
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || python3 -c 'import matplotlib' 2>/dev/null ||
    { echo "reproduce: skipped (no python3 with matplotlib)"; exit 77; }
before=$(git -C "$top" status --porcelain)
ARSIM=$bin OUT=$tmp/out JOBS=2 sh "$top/scripts/reproduce.sh" >"$tmp/log" 2>&1 ||
    { tail -n 20 "$tmp/log" >&2; fail "reproduce.sh exited $?"; }
after=$(git -C "$top" status --porcelain)
[ "$before" = "$after" ] || fail "reproduce.sh changed the tree: $(echo "$after" | head -5)"
n=$(ls "$tmp/out/figures"/*.png 2>/dev/null | wc -l)
[ "$n" -ge 10 ] || fail "reproduce.sh drew $n figures under OUT/figures"
for f in latency_bytes.csv latency_nelem.csv buffer_kind.csv h200_model.csv; do
    [ -s "$tmp/out/data/$f" ] || fail "no OUT/data/$f"
done
echo "reproduce: $n figures and every CSV under OUT; the tree unchanged"
