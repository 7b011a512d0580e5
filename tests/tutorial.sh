#!/bin/sh
# Every command of docs/TUTORIAL.md runs, in order, in a folder of its own, with the
# arsim under test on PATH: each ```sh block (but one after a "not run by
# tests/tutorial.sh" comment) must exit 0. Run by `make check`; skipped (77) without
# the sim backend, whose tables the tutorial shows.
set -u
. "${srcdir:-.}/tests/lib.sh"
arsim_test tutorial
doc=$(cd "${srcdir:-.}" && pwd)/docs/TUTORIAL.md
"$bin" run --backend sim --topology ring_1d:2 --algo ring --size 8K -q >/dev/null 2>&1 ||
    { echo "tutorial: skipped (no sim backend)"; exit 77; }
mkdir -p "$tmp/bin"
ln -s "$bin" "$tmp/bin/arsim"
# the blocks, as one script: set -e, each block announced
awk '
    /^<!-- not run by tests\/tutorial.sh/ { skip = 1; next }
    /^```sh$/ { inblk = 1; n++; if (!skip) printf "echo \"tutorial: block %d\" >&2\n", n; next }
    /^```/ && inblk { inblk = 0; skip = 0; next }
    inblk && !skip { print }
' "$doc" >"$tmp/script.sh"
nblocks=$(grep -c '^echo "tutorial: block' "$tmp/script.sh")
[ "$nblocks" -ge 8 ] || fail "only $nblocks runnable blocks found in $doc"
mkdir "$tmp/work"
(cd "$tmp/work" && PATH=$tmp/bin:$PATH sh -e "$tmp/script.sh" >"$tmp/out.txt" 2>"$tmp/err.txt") ||
    { tail -n 5 "$tmp/err.txt" >&2; fail "a command of docs/TUTORIAL.md failed (above)"; }
for f in study.csv study.png study_time.png buffers.csv buffers.png; do
    [ -s "$tmp/work/$f" ] || fail "the tutorial made no $f"
done
echo "tutorial: $nblocks blocks of docs/TUTORIAL.md ran"
