#!/bin/sh
# matmul-allreduce on the GPUs: every algorithm and dtype checked against float64 (two
# GPUs, and four virtual ranks on one), then the fused op's time beside its allreduce
# alone and one partition (the product whole, then its allreduce), at the shapes of
# tensor-parallel layers. After `scripts/gpu-check.sh build` here; logs in $OUT.
. "$(dirname "$0")/gpu-env.sh"
nvidia-smi -L >"$out/gpus.txt" 2>&1
ngpu=$(grep -c '^GPU' "$out/gpus.txt")
topo=full:$ngpu
fail=0
# one case first, its plan's shape and a timeline on failure
"$a" run --backend cuda --topology "$topo" --op matmul-allreduce --m 64 --n 96 --k 80 --algo ring --check --timeout 2 \
    -q --csv - >"$out/first.csv" 2>&1
echo "first: $(tail -1 "$out/first.csv" | cut -c1-300)"
ARSIM_CUDA_NO_PDL=1 "$a" run --backend cuda --topology "$topo" --op matmul-allreduce --m 64 --n 96 --k 80 --algo ring \
    --check --timeout 2 -q --csv - 2>&1 | tail -1 | cut -c1-300 | sed 's/^/no pdl: /'
for dt in bf16 fp32; do
    "$a" run --backend cuda --topology "$topo" --op matmul-allreduce --m 64,256 --n 96 --k 80 --dtype $dt \
        --algo ring,1stage,2stage --check --iters 3 --timeout 2 -q --csv - >>"$out/check.csv" 2>>"$out/check.err" || fail=1
    "$a" run --backend cuda --topology full:1 --ranks 4 --op matmul-allreduce --m 64 --n 96 --k 80 --dtype $dt \
        --partitions 4 --algo ring,2stage --check --iters 3 --timeout 2 -q --csv - >>"$out/check.csv" 2>>"$out/check.err" || fail=1
done
echo "check: exit $fail, $(grep -c ',ok,' "$out/check.csv") rows ok, $(grep -c ',FAIL,' "$out/check.csv") FAIL"
cat "$out/check.err" | head -5
# Timings: fused at its defaults, one partition, and the allreduce of its output alone.
for nk in "8192 8192" "3584 8192" "1792 4096"; do
    set -- $nk
    for m in 512 2048 8192; do
        f=$("$a" run --backend cuda --topology "$topo" --op matmul-allreduce --m $m --n $1 --k $2 --algo 2stage \
            --iters 20 --warmup 3 -q --csv - 2>&1 | tail -1 | awk -F, '{print $6, $14, $16}')
        one=$("$a" run --backend cuda --topology "$topo" --op matmul-allreduce --m $m --n $1 --k $2 --algo 2stage \
            --partitions 1 --iters 20 --warmup 3 -q --csv - 2>&1 | tail -1 | awk -F, '{print $16}')
        ar=$("$a" run --backend cuda --topology "$topo" --count $((m * $1)) --algo 2stage \
            --iters 20 --warmup 3 -q --csv - 2>&1 | tail -1 | awk -F, '{print $16}')
        echo "$f one_partition_us $one allreduce_us $ar" | tee -a "$out/fused.txt"
    done
done
