#!/bin/sh
# allgather-matmul on the GPUs: the GPU tests, a checked small bench, then the issue's shapes
# beside ncclAllGather + cuBLASLt. After `scripts/gpu-check.sh build`; logs in $OUT.
. "$(dirname "$0")/gpu-env.sh"
nvidia-smi -L >"$out/gpus.txt" 2>&1; cat "$out/gpus.txt"
model=h100_sxm
grep -q H200 "$out/gpus.txt" && model=h200_sxm
timeout 200 "$top/.devcarry/hw/gpu_test" --quick >"$out/gpu_test.log" 2>&1; echo "gpu_test --quick: exit $?"
grep -E "^FAIL" "$out/gpu_test.log" | head -5; grep -c "allgather-matmul" "$out/gpu_test.log"; tail -1 "$out/gpu_test.log"
"$a" bench --model $model --op allgather-matmul --m 64,256 --n 1024 --k 1024 --algo auto,ring,direct --check \
    >"$out/check.txt" 2>&1
echo "check: exit $?"; grep -i "wrong\|error" "$out/check.txt" | head -5
for nk in ${SHAPES:-3584x8192 8192x8192}; do
    n=${nk%x*} k=${nk#*x}
    timeout 150 "$a" bench --model $model --op allgather-matmul --m "${M:-2048:16384}" --n "$n" --k "$k" \
        --algo auto,ring,direct --csv "$out/bench_${n}_$k.csv" >"$out/bench_${n}_$k.txt" 2>&1
    echo "bench $n x $k: exit $?"; grep -v "^#  \|^# arsim\|^# NCCL\|^# allgather\|^#$" "$out/bench_${n}_$k.txt" | tail -16
done
