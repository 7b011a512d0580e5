#!/bin/bash
# compute-sanitizer over the cuda backend's GPU tests, on a GPU machine:
#   scripts/gpu-check.sh build          # here: GPU-only build in .devcarry/
#   scripts/gpu-sanitize.sh             # there: memcheck and racecheck of hw/gpu_test --quick
# Each tool runs each layout (1 and 2 ranks per GPU) as its own process with its own
# limit (SANITIZE_TIMEOUT_S, default 120 s); SANITIZE_TOOLS and SANITIZE_LAYOUTS narrow it.
# Logs under $OUT (or out/sanitize); the last lines say each verdict.
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
for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
    for layout in ${SANITIZE_LAYOUTS:-1 2}; do
        log=$out/sanitize-$tool-$layout.log
        t0=$(date +%s)
        timeout "${SANITIZE_TIMEOUT_S:-120}" "$cs" --tool "$tool" --error-exitcode 86 \
            --print-limit 20 "$t" --quick --layout "$layout" >"$log" 2>&1
        rc=$?
        verdict=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hw/gpu_test:" "$log" | tail -2 | tr '\n' ' ')
        echo "compute-sanitizer $tool, $layout rank(s) per GPU: exit $rc after $(($(date +%s) - t0)) s: $verdict"
        [ $rc -eq 0 ] || status=1
    done
done
exit $status
