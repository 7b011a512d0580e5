#!/bin/sh
# Predictions hold still: every row of a fixed grid of cases (the committed GPU
# measurement's cases on its calibrated model, and the shipped models on the shipped
# and built topologies, sim and analytic) must give the time and per-term breakdown
# recorded in tests/data/predictions/, within 0.01%. A change that means to move a
# prediction regenerates the files (ARSIM_GOLDEN_WRITE=1 tests/predictions.sh) in a
# commit of its own that says why.
# Run by `make check` (TESTS); ARSIM names the binary (default ./arsim).
# ARSIM_PREDICTIONS_SHARD=I/N checks only the rows `arsim sweep --shard I/N` runs
# (the sanitizer pass, where the whole grid would take hours); the golden rows the
# shard leaves out are not looked for then.
set -u
bin=${ARSIM:-./arsim}
srcdir=${srcdir:-.}
gold=$srcdir/tests/data/predictions
[ -x "$bin" ] || { echo "predictions: no $bin" >&2; exit 99; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/arsim-pred-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

have_sim=1
"$bin" run --backend sim --topology ring_1d:2 --algo ring --size 8K -q >/dev/null 2>&1 || have_sim=0

calib=$srcdir/validate/results/h200_calibrated.yaml
# Sizes a factor of 8 or 16 apart, from where latency rules to where the links do: every
# row runs sim at the defaults' plans (thousands of ops at 16 ranks), and a change that
# moves one size of a regime moves its neighbours too.
calib_sizes=8K,64K,512K,4M,32M,256M,1G
shipped_sizes=8K,128K,2M,16M,64M
shipped="--topology torus_2d_4x4,hgx_h100_8,h200_pair,ring_1d:8,full:8,mesh_2d_2x3,switch:4 \
--algo all --size $shipped_sizes --buffer hbm,sram,tcm --dtype bf16,fp32"

# name backend sweep-arguments
cases() {
    for be in sim analytic; do
        for r in 2 4 8; do
            echo "calibrated_${be}_r$r $be --topology h200_pair --model $calib --ranks $r --algo all --size $calib_sizes"
        done
        echo "shipped_$be $be $shipped"
    done
}

shard=${ARSIM_PREDICTIONS_SHARD:-}
if [ -n "$shard" ] && [ -n "${ARSIM_GOLDEN_WRITE:-}" ]; then
    echo "predictions: ARSIM_GOLDEN_WRITE writes the whole grid: unset ARSIM_PREDICTIONS_SHARD" >&2
    exit 2
fi

status=0
cases | while read -r name be args; do
    if [ "$be" = sim ] && [ $have_sim = 0 ]; then
        echo "predictions: $name skipped (no sim backend)"
        continue
    fi
    # shellcheck disable=SC2086
    "$bin" sweep --backend "$be" $args ${shard:+--shard "$shard"} --out "$tmp/$name.csv" --jobs 2 -q 2>/dev/null
    rc=$?
    if [ $rc -ne 0 ] && [ ! -s "$tmp/$name.csv" ]; then
        echo "predictions: FAIL: $name: sweep exited $rc with no rows" >&2
        exit 1
    fi
    if [ -n "${ARSIM_GOLDEN_WRITE:-}" ]; then
        mkdir -p "$gold"
        { head -1 "$tmp/$name.csv"; tail -n +2 "$tmp/$name.csv" | sort; } |
            awk -F, -v OFS=, '{ NF = NF - 1; print }' >"$gold/$name.csv"
        echo "predictions: wrote $gold/$name.csv ($(($(wc -l <"$gold/$name.csv") - 1)) rows)"
        continue
    fi
    [ -f "$gold/$name.csv" ] || { echo "predictions: FAIL: no $gold/$name.csv" >&2; exit 1; }
    # Columns by name (both files' headers). Key: the columns that name a case
    # (backend .. chunk_bytes); values: time_us and the five terms, each within 0.01%
    # (or 1e-6 us).
    awk -F, -v name="$name" -v sharded="${shard:+1}" '
        BEGIN {
            nk = split("backend topology model nranks algo dtype redop root buffer bytes count channels chunk_bytes", kn, " ")
            nv = split("time_us link_us memory_us reduce_us sync_us launch_us", vn, " ")
        }
        FNR == 1 {
            for (i = 1; i <= NF; i++) idx[NR == FNR ? "g" : "n", $i] = i
            for (i = 1; i <= nk; i++) if (!((NR == FNR ? "g" : "n") SUBSEP kn[i] in idx)) {
                printf "predictions: FAIL: %s: no column %s\n", name, kn[i]; exit 1 }
            next
        }
        function gk(   i, k) { k = $(idx["g", kn[1]]); for (i = 2; i <= nk; i++) k = k "," $(idx["g", kn[i]]); return k }
        function nk_(  i, k) { k = $(idx["n", kn[1]]); for (i = 2; i <= nk; i++) k = k "," $(idx["n", kn[i]]); return k }
        NR == FNR { want[gk()] = $0; next }
        {
            k = nk_(); got++
            if (!(k in want)) { printf "predictions: FAIL: %s: a row not in the golden file: %s\n", name, k; bad++; next }
            split(want[k], w, ",")
            for (i = 1; i <= nv; i++) {
                a = w[idx["g", vn[i]]] + 0; b = $(idx["n", vn[i]]) + 0; d = a - b; if (d < 0) d = -d
                m = a < 0 ? -a : a
                if (d > 1e-6 && d > 1e-4 * m) {
                    printf "predictions: FAIL: %s: %s %s: %s, golden %s\n", name, k, vn[i], b, a
                    bad++; break
                }
            }
            delete want[k]
        }
        END {
            if (!sharded) for (k in want) { printf "predictions: FAIL: %s: golden row missing: %s\n", name, k; bad++ }
            printf "predictions: %s: %d rows, %d differ\n", name, got, bad
            exit bad > 0
        }' "$gold/$name.csv" "$tmp/$name.csv" || exit 1
done
