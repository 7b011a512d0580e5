#!/bin/bash
# compute-sanitizer over the cuda backend's GPU tests, on a GPU machine:
#   scripts/gpu-check.sh build          # here: GPU-only build in .devcarry/
#   scripts/gpu-sanitize.sh             # there: memcheck and racecheck of hw/gpu_test --quick
# Logs under $OUT (or out/sanitize); the last lines say each tool's verdict.
# --quick runs the same cases on fewer sizes and layouts: the tools slow kernels
# by one or two orders of magnitude.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$top/out/sanitize}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 LD_LIBRARY_PATH="$top/.devcarry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
t=$top/.devcarry/hw/gpu_test
[ -x "$t" ] || { echo "gpu-sanitize: $t missing: run scripts/gpu-check.sh build first" >&2; exit 2; }
status=0
for tool in memcheck racecheck; do
    log=$out/sanitize-$tool.log
    timeout "${SANITIZE_TIMEOUT_S:-120}" "$cs" --tool "$tool" --error-exitcode 86 \
        --print-limit 20 "$t" --quick >"$log" 2>&1
    rc=$?
    verdict=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hw/gpu_test:" "$log" | tail -2 | tr '\n' ' ')
    echo "compute-sanitizer $tool: exit $rc: $verdict"
    [ $rc -eq 0 ] || status=1
done
exit $status
