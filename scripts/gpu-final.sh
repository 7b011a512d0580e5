#!/bin/bash
# One device call for the epoch-parity SCRATCH slots of 1stage (docs/PERFORMANCE.md,
# round 3): GPU tests, --algo auto beside NCCL with --check, then 1stage with one
# and two slots side by side at 8 KB .. 16 MB and 2stage channel counts at 16 MB.
#
#   scripts/gpu-check.sh build     # here: GPU-only build in .devcarry/
#   scripts/gpu-final.sh           # on the GPU machine; logs under $OUT (or out/gpu)
#
# About 150 s of commands: every step has its own timeout and the sweeps stop when
# FINAL_BUDGET_S (default 140) seconds have gone. The short table comes last.
set -u
. "$(dirname "$0")/gpu-env.sh"
T0=$(date +%s)
left() { [ $(( $(date +%s) - T0 )) -lt "${FINAL_BUDGET_S:-140}" ]; }
b() { left && timeout 25 "$a" bench --backend cuda --no-nccl --dtype bf16 "$@"; }
status=0
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv; } >"$out/machine.txt" 2>&1

echo "== GPU tests (hw/gpu_test)"
timeout 70 "$top/.devcarry/hw/gpu_test" >"$out/gpu_test.log" 2>&1 || status=1
grep -E "^FAIL|passed" "$out/gpu_test.log" | tail -6
echo "gpu_test: $(( $(date +%s) - T0 )) s"

echo "== run --check (1stage one and two slots, 2stage; 4 and 8 ranks on 2 GPUs)"
{
    timeout 20 "$a" run --backend cuda --topology full:2 --algo 1stage,2stage --size 4K:8M --iters 7 --check
    timeout 20 "$a" run --backend cuda --topology full:2 --ranks 4 --algo 1stage --count 1003,65541 --iters 5 --check
} >"$out/run_check.txt" 2>&1 || status=1
grep -cE " ok$" "$out/run_check.txt" | sed 's/^/ok rows: /'
grep -vE "^#| ok$" "$out/run_check.txt" | head -5

echo "== auto beside NCCL (--check)"
timeout 60 "$a" bench --backend cuda --algo auto --dtype bf16 --size 8K:1G --check --csv "$out/bench.csv" \
    >"$out/bench.txt" 2>&1 || status=1
echo "auto: $(( $(date +%s) - T0 )) s"

echo "== one slot vs two, 2stage channels at 16 MB"
{
    b --algo 1stage:1slot,1stage:2slot,x-oneshot --channels 2 --size 8K:16K
    b --algo 1stage:1slot,1stage:2slot --channels 4 --size 32K
    b --algo 1stage:1slot,1stage:2slot --channels 8 --size 64K
    b --algo 1stage:1slot,1stage:2slot --channels 16 --size 128K
    b --algo 1stage:1slot,1stage:2slot --channels 32 --size 256K:512K
    b --algo 1stage:1slot,1stage:2slot --channels 64 --size 1M
    b --algo 1stage:2slot --channels 128 --size 1M
    b --algo 1stage:1slot,1stage:2slot,2stage --channels 128 --size 2M:4M
    for c in 96 112 128; do b --algo 2stage --channels $c --size 16M; done
    b --algo 1stage:2slot --channels 128 --size 8M:16M
} >"$out/sweep.txt" 2>&1
echo "sweeps: $(( $(date +%s) - T0 )) s"
left && timeout 30 "$a" bench --backend cuda --algo auto --dtype bf16 --size 8K:16M >"$out/bench2.txt" 2>&1

echo "== sweep rows (size plan/channels us)"
grep -v '^#' "$out/sweep.txt" | awk 'NF>=5{print $1, $4, $5}'
[ -s "$out/bench2.txt" ] && { echo "== auto, second run (size plan us)"; grep -v '^#' "$out/bench2.txt" | awk 'NF>=5{print $1, $4, $5}'; }
echo "== auto beside NCCL"
cat "$out/bench.txt"
echo "total: $(( $(date +%s) - T0 )) s"
exit $status
