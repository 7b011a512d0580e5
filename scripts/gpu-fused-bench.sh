#!/bin/sh
# arsim bench --op matmul-allreduce at tensor-parallel shapes (M 512..16384; N x K 8192 x 8192,
# 3584 x 8192, 1792 x 4096), beside cuBLASLt + ncclAllReduce, after a checked small run. After
# `scripts/gpu-check.sh build` here; logs in $OUT.
. "$(dirname "$0")/gpu-env.sh"
nvidia-smi -L >"$out/gpus.txt" 2>&1
model=h100_sxm
grep -q H200 "$out/gpus.txt" && model=h200_sxm
"$a" bench --model $model --op matmul-allreduce --m 64,256 --n 1024 --k 1024 --algo auto,ring,2stage --check \
    >"$out/check.txt" 2>&1
echo "check: exit $?"; grep -i "wrong\|error" "$out/check.txt" | head -5
for nk in "8192 8192" "3584 8192" "1792 4096"; do
    set -- $nk
    "$a" bench --model $model --op matmul-allreduce --m 512:16384 --n $1 --k $2 --csv "$out/bench_$1_$2.csv" \
        >"$out/bench_$1_$2.txt" 2>&1
    echo "bench $1 x $2: exit $?"
    grep -v "^# arsim\|^# NCCL\|^# matmul\|^# [a-z]" "$out/bench_$1_$2.txt" | tail -12
done
