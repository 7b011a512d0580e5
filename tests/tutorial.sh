#!/bin/sh
# Every command of docs/TUTORIAL.md, then of docs/WHATIF.md, runs in order in a folder of
# the doc's own, with the arsim under test on PATH: each ```sh block (but one after a "not run by
# tests/tutorial.sh" comment) must exit 0. Run by `make check`; skipped (77) without
# the sim backend, whose tables the tutorial shows.
set -u
. "${srcdir:-.}/tests/lib.sh"
arsim_test tutorial
"$bin" run --backend sim --topology ring_1d:2 --algo ring --size 8K -q >/dev/null 2>&1 ||
    { echo "tutorial: skipped (no sim backend)"; exit 77; }
mkdir -p "$tmp/bin"
ln -s "$bin" "$tmp/bin/arsim"
# DOC BLOCKS-AT-LEAST FILES-IT-MAKES
while read -r name least files; do
    doc=$(cd "${srcdir:-.}" && pwd)/docs/$name
    # the blocks, as one script: set -e, each block announced
    awk '
        /^<!-- not run by tests\/tutorial.sh/ { skip = 1; next }
        /^```sh$/ { inblk = 1; n++; if (!skip) printf "echo \"tutorial: block %d\" >&2\n", n; next }
        /^```/ && inblk { inblk = 0; skip = 0; next }
        inblk && !skip { print }
    ' "$doc" >"$tmp/script.sh"
    nblocks=$(grep -c '^echo "tutorial: block' "$tmp/script.sh")
    [ "$nblocks" -ge "$least" ] || fail "only $nblocks runnable blocks found in $doc"
    rm -rf "$tmp/work" && mkdir "$tmp/work"
    (cd "$tmp/work" && PATH=$tmp/bin:$PATH sh -e "$tmp/script.sh" >"$tmp/out.txt" 2>"$tmp/err.txt") ||
        { tail -n 5 "$tmp/err.txt" >&2; fail "a command of docs/$name failed (above)"; }
    for f in $files; do
        [ -s "$tmp/work/$f" ] || fail "docs/$name made no $f"
    done
    echo "tutorial: $nblocks blocks of docs/$name ran"
done <<'DOCS'
TUTORIAL.md 9 study.csv study.png study_time.png buffers.csv buffers.png
WHATIF.md 5 fat_ring.yaml whatif.csv whatif_efficiency.png innet.csv innet_busbw.png
DOCS
