#!/bin/sh
# The fused op's partitions and channels on the GPUs: GPU tests, a checked small bench, a
# partitions x channels sweep beside cuBLASLt + NCCL, and timelines (`run --timeline`).
# After `scripts/gpu-check.sh build`; logs in $OUT (logs.tgz).
#   SHAPES  NxK pairs (default 3584x8192);  M  rows (default 4096,8192);  ALGOS (default 2stage)
#   PARTS, CHANS  the sweep (default "1 4 8" and "8 16 32");  TL  timelines of M=8192, as P:C
#   (default "8:8 8:16");  QUICK=0 skips the tests
. "$(dirname "$0")/gpu-env.sh"
nvidia-smi -L >"$out/gpus.txt" 2>&1; cat "$out/gpus.txt"
model=h100_sxm
grep -q H200 "$out/gpus.txt" && model=h200_sxm
if [ "${QUICK:-1}" = 1 ]; then
    timeout 240 "$top/.devcarry/hw/gpu_test" --quick >"$out/gpu_test.log" 2>&1; echo "gpu_test --quick: exit $?"
    tail -1 "$out/gpu_test.log"
    "$a" bench --model $model --op matmul-allreduce --m 64,256 --n 1024 --k 1024 --partitions 4 --algo auto,ring,2stage \
        --check >"$out/check.txt" 2>&1
    echo "check: exit $?"; grep -i "wrong\|error" "$out/check.txt" | head -5
fi
for n_k in ${SHAPES:-3584x8192}; do
  n=${n_k%x*} k=${n_k#*x}
  for al in ${ALGOS:-2stage}; do
  for p in ${PARTS:-1 4 8}; do
    for ch in ${CHANS:-8 16 32}; do
      f="$out/b_${al}_${n}_${k}_${p}_$ch"
      timeout 120 "$a" bench -q --model $model --op matmul-allreduce --m ${M:-4096,8192} --n $n --k $k --partitions $p \
          --channels $ch --algo $al --csv "$f.csv" >"$f.txt" 2>&1
      echo "== $al N=$n K=$k P=$p ch=$ch exit $?"; grep -v "^#" "$f.txt" | tail -3
    done
  done
  done
  tl_algo=${ALGOS:-2stage}; tl_algo=${tl_algo%% *}
  for pc in ${TL:-8:8 8:16}; do
    p=${pc%:*} ch=${pc#*:}
    timeout 60 "$a" run --backend cuda --model $model --topology full:2 --op matmul-allreduce --m 8192 --n $n --k $k \
        --partitions $p --channels $ch --algo "$tl_algo" --timeline "$out/tl_${n}_${k}_${p}_$ch.csv" >"$out/tl_${n}_${p}_$ch.txt" 2>&1
    echo "timeline P=$p ch=$ch: exit $?"; tail -1 "$out/tl_${n}_${p}_$ch.txt"
  done
done
cd "$out" && tar czf logs.tgz $(ls ./*.txt ./*.csv ./*.log 2>/dev/null) && rm -f b_*.txt b_*.csv tl_*
