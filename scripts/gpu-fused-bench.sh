#!/bin/sh
# arsim bench --op matmul-allreduce at tensor-parallel shapes beside cuBLASLt + ncclAllReduce,
# after a checked small run. After `scripts/gpu-check.sh build` here; logs in $OUT.
#   FUSED_SHAPES  the (N, K) pairs, NxK (default "8192x8192 3584x8192 1792x4096")
#   FUSED_M       the rows (default 512:16384)
. "$(dirname "$0")/gpu-env.sh"
nvidia-smi -L >"$out/gpus.txt" 2>&1
model=h100_sxm
grep -q H200 "$out/gpus.txt" && model=h200_sxm
"$a" bench --model $model --op matmul-allreduce --m 64,256 --n 1024 --k 1024 --algo auto,ring,2stage --check \
    >"$out/check.txt" 2>&1
echo "check: exit $?"; grep -i "wrong\|error" "$out/check.txt" | head -5
for nk in ${FUSED_SHAPES:-8192x8192 3584x8192 1792x4096}; do
    n=${nk%x*} k=${nk#*x}
    "$a" bench --model $model --op matmul-allreduce --m "${FUSED_M:-512:16384}" --n "$n" --k "$k" \
        --csv "$out/bench_${n}_$k.csv" >"$out/bench_${n}_$k.txt" 2>&1
    echo "bench $n x $k: exit $?"
    grep -v "^# arsim\|^# NCCL\|^# matmul\|^# [a-z]" "$out/bench_${n}_$k.txt" | tail -12
done
