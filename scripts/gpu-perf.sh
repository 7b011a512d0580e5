#!/bin/sh
# One device call for the performance work (docs/PERFORMANCE.md): the GPU tests,
# `arsim run --check` of the shots, the channel sweeps of 1stage/2stage and the
# pull probe, then `--algo auto` beside NCCL with --check. Run on the GPU machine
# after `scripts/gpu-check.sh build` here; logs to $OUT (or out/gpu), a short
# table last.   scripts/gpu-perf.sh [all|sweep|auto|quick|final]
set -u
what=${1:-all}
. "$(dirname "$0")/gpu-env.sh"
b() { timeout 60 "$a" bench --backend cuda --no-nccl "$@"; }
status=0
T0=$(date +%s)
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv; } >"$out/machine.txt" 2>&1
if [ "$what" = all ]; then
    echo "== GPU tests"
    timeout 150 "$top/.devcarry/hw/gpu_test" >"$out/gpu_test.log" 2>&1 || status=1
    grep -E "^FAIL|passed" "$out/gpu_test.log" | tail -8
    echo "== run --check"
    timeout 60 "$a" run --backend cuda --topology full:2 --algo 1stage,2stage,ring --size 4K:4M --check \
        >"$out/run_check.txt" 2>&1 || status=1
    tail -3 "$out/run_check.txt"
fi
echo "== auto beside NCCL"
timeout 240 "$a" bench --backend cuda --algo auto --dtype bf16 --size 8K:1G --check --csv "$out/bench.csv" \
    >"$out/bench.txt" 2>&1 || status=1
echo "auto: $(( $(date +%s) - T0 )) s"
if [ "$what" = final ]; then
    echo "== pipelined plans on the GPUs (run --check, 64 KB chunks, odd count)"
    timeout 60 "$a" run --backend cuda --topology full:2 --algo 1stage,2stage --channels 8 --chunk 64K \
        --count 8388611,1000003 --check >"$out/run_chunked.txt" 2>&1 || status=1
    tail -4 "$out/run_chunked.txt"
    echo "== auto again (no check)"
    timeout 120 "$a" bench --backend cuda --algo auto --dtype bf16 --size 8K:1G >"$out/bench2.txt" 2>&1 || status=1
    {
        b --algo 1stage --channels 96 --size 1M
        b --algo 1stage --channels 48 --size 512K:1M
        b --algo 1stage,x-oneshot --channels 1 --size 8K
    } >"$out/sweep.txt" 2>&1
elif [ "$what" = quick ]; then
    echo "== run --check"
    timeout 40 "$a" run --backend cuda --topology full:2 --algo 1stage,2stage --size 4K:4M --check \
        >"$out/run_check.txt" 2>&1 || status=1
    tail -2 "$out/run_check.txt"
    {
        b --algo 1stage --channels 1 --size 8K:16K
        b --algo 1stage,2stage --channels 128 --size 16M,256M,1G
    } >"$out/sweep.txt" 2>&1
elif [ "$what" != auto ]; then
    echo "== sweeps"
    t0=$(date +%s)
    {
        for c in 1 2 4; do b --algo 1stage --channels $c --size 8K:32K; done
        b --algo x-oneshot --channels 2 --size 8K:32K
        for c in 16 32 64 128; do b --algo 1stage --channels $c --size 128K:16M; done
        for c in 64 128; do b --algo 2stage --channels $c --size 1M:16M; done
        for c in 64 128; do
            [ $(( $(date +%s) - T0 )) -lt ${PERF_BUDGET_S:-330} ] && b --algo 1stage,2stage --channels $c --size 32M:1G
        done
    } >"$out/sweep.txt" 2>&1
    echo "sweeps: $(( $(date +%s) - t0 )) s"
fi
if [ -f "$out/sweep.txt" ]; then
    echo "== best per size (family: plan/channels us)"
    grep -v '^#' "$out/sweep.txt" | awk 'NF>=5{split($4,a,"/"); k=$1" "a[1]; if(!(k in b)||$5<b[k]){b[k]=$5;w[k]=$4}} END{for(k in b) print k, w[k], b[k]}' \
        | sort -k1,1n -k2,2 | awk '{r[$1]=r[$1]"  "$3" "$4} END{for(s in r) print s r[s]}' | sort -n
fi
[ -f "$out/bench2.txt" ] && { echo "== auto, second run"; grep -v '^#' "$out/bench2.txt" | awk '{print $1, $4, $5}'; }
cat "$out/bench.txt"
exit $status
