#!/bin/sh
# Channel sweeps behind `--algo auto` (validate/bench.c ar_hw_auto_algo) and the parts
# of a small run (launch + barrier, launch + one local copy). Run on the GPU
# machine after `scripts/gpu-check.sh build` here; logs to $OUT (or out/gpu).
set -u
. "$(dirname "$0")/gpu-env.sh"
for c in 1 2 4 8 16; do
    timeout 100 "$a" bench --backend cuda --no-nccl --algo 1stage,x-barrier,x-local --channels "$c" --size 8K:2M
done >"$out/sweep_1stage.txt" 2>&1
for c in 8 16 24 32 48 64 96 128; do
    timeout 100 "$a" bench --backend cuda --no-nccl --algo 2stage --channels "$c" --size 256K:1G
done >"$out/sweep_2stage.txt" 2>&1
# best time per size and algo family
for f in "$out"/sweep_*.txt; do
    grep -v '^#' "$f" | awk '{k=$1" "$4; split($4,a,"/"); fam=a[1]" "$1; if(!(fam in b) || $5<b[fam]){b[fam]=$5; w[fam]=$4}} END{for(k in b) print k, w[k], b[k]}' | sort -k1,1 -k2,2n
done
