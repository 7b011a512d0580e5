#!/bin/sh
# matmul-allreduce on the GPUs: every algorithm and dtype checked against float64 (two
# GPUs, and four virtual ranks on one), then the fused op's time beside its allreduce
# alone and one partition (the product whole, then its allreduce), at the shapes of
# tensor-parallel layers. After `scripts/gpu-check.sh build` here; logs in $OUT.
. "$(dirname "$0")/gpu-env.sh"
nvidia-smi -L >"$out/gpus.txt" 2>&1
ngpu=$(grep -c '^GPU' "$out/gpus.txt")
topo=full:$ngpu
model=h100_sxm
grep -q H200 "$out/gpus.txt" && model=h200_sxm
fail=0
# one case first, its plan's shape and a timeline on failure
"$a" run --backend cuda --model $model --topology "$topo" --op matmul-allreduce --m 64 --n 96 --k 80 --algo ring --check --timeout 2 \
    -q --csv - >"$out/first.csv" 2>&1
echo "first: $(tail -1 "$out/first.csv" | cut -c1-300)"
ARSIM_CUDA_NO_PDL=1 "$a" run --backend cuda --model $model --topology "$topo" --op matmul-allreduce --m 64 --n 96 --k 80 --algo ring \
    --check --timeout 2 -q --csv - 2>&1 | tail -1 | cut -c1-300 | sed 's/^/no pdl: /'
for dt in bf16 fp32; do
    "$a" run --backend cuda --model $model --topology "$topo" --op matmul-allreduce --m 64,256 --n 96 --k 80 --dtype $dt \
        --algo ring,1stage,2stage --check --iters 3 --timeout 2 -q --csv - >>"$out/check.csv" 2>>"$out/check.err" || fail=1
    "$a" run --backend cuda --model $model --topology full:1 --ranks 4 --op matmul-allreduce --m 64 --n 96 --k 80 --dtype $dt \
        --partitions 4 --algo ring,2stage --check --iters 3 --timeout 2 -q --csv - >>"$out/check.csv" 2>>"$out/check.err" || fail=1
done
echo "check: exit $fail, $(grep -c ',ok,' "$out/check.csv") rows ok, $(grep -c ',FAIL,' "$out/check.csv") FAIL"
cat "$out/check.err" | head -5
# The product alone, for the model's rate and fixed cost: one rank on one GPU, one
# partition, one channel (the product, then a copy of its output: the allreduce of one).
for shape in "8192 8192 8192" "4096 8192 8192" "2048 3584 8192" "512 1792 4096" "128 1024 1024" "64 512 512"; do
    set -- $shape
    for dt in bf16 fp32; do
        [ $dt = fp32 ] && [ $1 -gt 2048 ] && continue
        "$a" run --backend cuda --model $model --topology full:1 --op matmul-allreduce --m $1 --n $2 --k $3 --dtype $dt --partitions 1 --algo ring \
            --channels 1 --iters 20 --warmup 3 -q --csv - 2>&1 | tail -1 >>"$out/alone.csv"
    done
done
# Fused at the model's defaults, then one partition at the same channels (the product
# whole, then its allreduce), then the allreduce of its output alone at those channels.
for nk in "8192 8192" "3584 8192" "1792 4096"; do
    set -- $nk
    for m in 512 2048 8192; do
        row=$("$a" run --backend cuda --model $model --topology "$topo" --op matmul-allreduce --m $m --n $1 --k $2 --algo 2stage \
            --iters 20 --warmup 3 -q --csv - 2>&1 | tail -1)
        echo "$row" >>"$out/fused.csv"
        ch=$(echo "$row" | cut -d, -f14)
        "$a" run --backend cuda --model $model --topology "$topo" --op matmul-allreduce --m $m --n $1 --k $2 --algo 2stage \
            --partitions 1 --channels "$ch" --iters 20 --warmup 3 -q --csv - 2>&1 | tail -1 >>"$out/one_partition.csv"
        "$a" run --backend cuda --model $model --topology "$topo" --count $((m * $1)) --algo 2stage --channels "$ch" \
            --iters 20 --warmup 3 -q --csv - 2>&1 | tail -1 >>"$out/allreduce.csv"
    done
done
for f in alone fused one_partition allreduce; do echo "== $f"; cut -d, -f6,8,14,15,16 "$out/$f.csv"; done
