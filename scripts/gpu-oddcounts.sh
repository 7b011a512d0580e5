#!/bin/bash
# Odd counts against their aligned neighbours on the first G GPUs: every named algorithm
# at its defaults, fp32 and bf16, counts that are not a multiple of the 16-byte vector
# (1001, 65537, 1000003, 16777259) beside the aligned count next to each, outputs checked
# against float64. Run after `scripts/gpu-check.sh build` here; logs under $OUT (or
# out/gpu); a table of odd / aligned time per algorithm and count last.
#
#   scripts/gpu-oddcounts.sh G          # one rank on each of the first G GPUs
#   scripts/gpu-oddcounts.sh shared R   # R ranks sharing the first GPU (--topology full:1 --ranks R)
set -u
. "$(dirname "$0")/gpu-env.sh"
place=""
if [ "${1:-}" = shared ]; then
    G=${2:-4}
    place="--topology full:1 --ranks $G"
else
    G=${1:-2}
fi
need_count gpu-oddcounts.sh "$G"
vis=$(seq -s, 0 $((G - 1)))
[ -n "$place" ] && vis=0 && G=shared$G
algos=${ODD_ALGOS:-ring,torus2d,mesh2d,1stage,2stage,center_root,naive}
status=0
: >"$out/odd_summary_$G.txt"
for dt in fp32 bf16; do
    # shellcheck disable=SC2086 # place is a list of words
    CUDA_VISIBLE_DEVICES=$vis timeout 300 "$a" bench --backend cuda $place --no-nccl --algo "$algos" --dtype $dt --check \
        --count 1000,1001,65536,65537,1000000,1000003,16777216,16777259 >"$out/odd_${G}_$dt.txt" 2>&1 || status=1
    # columns: 2 count, 6 algo, 9 time; pairs (aligned, odd) in the order given
    awk -v dt=$dt '$1 ~ /^[0-9]+$/ { split($6, p, "/"); t[p[1]" "$2] = $9; a[p[1]] = 1 }
        END { n = split("1000 1001 65536 65537 1000000 1000003 16777216 16777259", c, " ")
              for (al in a) for (i = 1; i < n; i += 2)
                  if ((al" "c[i]) in t && (al" "c[i+1]) in t)
                      printf "%s %s %s %.2f us, %s %.2f us, odd/aligned %.3f\n", dt, al, c[i+1], t[al" "c[i+1]],
                             c[i], t[al" "c[i]], t[al" "c[i+1]] / t[al" "c[i]] }' "$out/odd_${G}_$dt.txt" | sort \
        >>"$out/odd_summary_$G.txt"
done
cat "$out/odd_summary_$G.txt"
grep -h "wrong\|FAIL\|error" "$out"/odd_"${G}"_*.txt | head -5
exit $status
