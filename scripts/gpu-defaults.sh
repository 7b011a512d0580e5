#!/bin/bash
# Named algorithms at their default channels (the model's choice, arsim/case.h) against
# every channel count on the same GPUs, and auto beside NCCL: one device call per GPU
# count. Run after `scripts/gpu-check.sh build` here; logs under $OUT (or out/gpu).
#
#   scripts/gpu-defaults.sh tests G    # GPU tests and run --check, then the G-GPU part
#   scripts/gpu-defaults.sh bench G    # the G-GPU part alone
#   scripts/gpu-defaults.sh shared R   # R ranks sharing the first GPU (--topology full:1 --ranks R)
#
# The G-GPU part (the first G GPUs): bench of auto and the named algorithms at defaults
# beside NCCL over 8 KB .. 1 GB, then each named algorithm at 1..128 channels at 1 MB,
# 16 MB and 256 MB (DEFAULTS_SIZES) without NCCL; a table of default against best per size last.
# shared: the same without NCCL, the defaults at DEFAULTS_SIZES, the channels up to the 132
# executor blocks an H100 or H200 holds at once (R x channels <= 132).
set -u
. "$(dirname "$0")/gpu-env.sh"
what=${1:-tests}
G=${2:-2}
algos=${DEFAULTS_ALGOS:-ring,1stage,2stage}
sizes=${DEFAULTS_SIZES:-1M,16M,256M}
need_count gpu-defaults.sh "$G"
vis=$(seq -s, 0 $((G - 1)))
place="" nccl="" span=8K:1G maxch=128
if [ "$what" = shared ]; then # G is the ranks, all on GPU 0
    vis=0 place="--topology full:1 --ranks $G" nccl=--no-nccl span=$sizes maxch=$((132 / G))
fi
# the shipped model of this GPU kind: its choice of channels is the one to judge
model=h200_sxm
nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -q H100 && model=h100_sxm
status=0
if [ "$what" = tests ]; then
    { date -u; nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } \
        >"$out/machine.txt" 2>&1
    echo "== GPU tests"
    timeout 240 "$top/.devcarry/hw/gpu_test" >"$out/gpu_test.log" 2>&1; rc=$?
    grep -E "^FAIL|passed" "$out/gpu_test.log" | tail -4
    [ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1
    echo "== run --check"
    timeout 120 "$a" run --backend cuda --topology "full:$G" --algo all --size 4K:4M --check >"$out/run_check.txt" 2>&1 || status=1
    echo "rows ok: $(grep -cE ' 0 +[0-9.]+ +[0-9.]+$' "$out/run_check.txt"), lines: $(grep -vc '^#' "$out/run_check.txt")"
fi
if [ -n "$nccl" ]; then echo "== $what $G: auto and named at defaults"; else echo "== $G GPUs: auto and named at defaults beside NCCL"; fi
# shellcheck disable=SC2086 # place and nccl are lists of words
CUDA_VISIBLE_DEVICES=$vis timeout 300 "$a" bench --backend cuda --model "$model" $place $nccl --algo "auto,$algos" --dtype bf16 \
    --size "$span" --csv "$out/bench_$G.csv" >"$out/bench_$G.txt" 2>&1 || status=1
tail -3 "$out/bench_$G.txt"
echo "== $what $G: channel sweep"
for c in 1 2 4 8 16 32 64 128; do
    [ "$c" -gt "$maxch" ] && break
    # shellcheck disable=SC2086
    CUDA_VISIBLE_DEVICES=$vis timeout 60 "$a" bench --backend cuda --model "$model" $place --no-nccl --algo "$algos" --channels "$c" \
        --dtype bf16 --size "$sizes" 2>&1
done >"$out/sweep_$G.txt" || status=1
# per size and algorithm: the default's time, the best channel count and its time
# (table columns: 1 size, 6 algo, 7 channels, 9 time)
awk '$1 ~ /^[0-9]+$/ && $6 !~ /auto|\// {print $1, $6, $9, $7}' "$out/bench_$G.txt" >"$out/defaults_$G.txt"
awk '$1 ~ /^[0-9]+$/ {split($6, p, "/"); print $1, p[1], p[2], $9}' "$out/sweep_$G.txt" >"$out/best_$G.raw"
awk 'NR == FNR {d[$1" "$2] = $3; dc[$1" "$2] = $4; next}
     {k = $1" "$2; if (!(k in b) || $4 < b[k]) {b[k] = $4; c[k] = $3}}
     END {for (k in b) if (k in d) printf "%s default %s channels %.2f us, best %s channels %.2f us, default/best %.3f\n", k, dc[k], d[k], c[k], b[k], d[k] / b[k]}' \
    "$out/defaults_$G.txt" "$out/best_$G.raw" | sort -k1,1n -k2 | tee "$out/summary_$G.txt"
exit $status
