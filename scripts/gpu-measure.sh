#!/bin/bash
# The measurement docs/VALIDATION.md compares the model with, taken again on the first two
# GPUs: `arsim validate --measure-only` (every algorithm at its defaults, 8 KB .. 1 GB bf16,
# 1, 2 and 4 ranks per GPU) into $OUT/measured.csv (or out/gpu). Run after
# `scripts/gpu-check.sh build` here; compare here with
#   arsim validate --measured measured.csv --model validate/results/h200_calibrated.yaml
set -u
. "$(dirname "$0")/gpu-env.sh"
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1}
{ date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } >"$out/machine.txt" 2>&1
timeout "${MEASURE_TIMEOUT:-560}" "$a" validate --measure-only --topology h200_pair -o "$out/measured.csv" \
    >"$out/measure.log" 2>&1
rc=$?
tail -3 "$out/measure.log"
echo "rows: $(($(grep -vc '^#' "$out/measured.csv") - 1))"
exit $rc
