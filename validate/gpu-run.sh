#!/bin/bash
# The GPU half of the validation (no SimGrid there): calibrate from micro-benchmarks, on
# two GPUs and on one, then measure every algorithm at its defaults at the placements,
# dtypes, odd counts and channel counts docs/VALIDATION.md judges a model on.
#
#   scripts/gpu-check.sh build    here: a GPU-only arsim in .devcarry/
#   validate/gpu-run.sh run       there: writes $OUT (or out/gpu):
#       KIND_calibrated.yaml      the model from two GPUs (KIND: h100, h200, by the GPU's name)
#       KIND_1gpu.yaml            the model from GPU 0 alone (link terms assumed)
#       measured.csv              2 GPUs: 1, 2, 4 ranks per GPU, bf16, 8 KB .. 1 GB
#       measured_1gpu.csv         GPU 0 alone: 2, 4, 8 ranks, bf16, 8 KB .. 256 MB
#       measured_odd.csv          2 GPUs, 1 rank each: fp32 and bf16 at 1001, 65537, 1000003, 16777259
#       measured_channels.csv     2 GPUs, 1 rank each: 8 and 16 channels, 64 KB .. 256 MB
#       machine.txt, gpu-run.log
#   validate/gpu-run.sh calibrate there: the two calibrations alone (about 20 s)
#
# Each measurement runs as its own process with its own time limit, so one that overruns
# costs only its own rows. Then, here, e.g.:
#   arsim validate --measured out/gpu/measured.csv --model out/gpu/h100_calibrated.yaml
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0); the cuda backend never uses it.
set -u
. "$(dirname "$0")/../scripts/gpu-env.sh"
log=$out/gpu-run.log

kind() {
    case "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" in
    *H100*) echo h100 ;;
    *H200*) echo h200 ;;
    *) echo gpu ;;
    esac
}

calibrate() {
    k=$(kind)
    { date -u; nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } \
        >"$out/machine.txt" 2>&1
    n=$(nvidia-smi -L 2>/dev/null | wc -l)
    t0=$(date +%s)
    if [ "$n" -ge 2 ]; then
        timeout "${CALIB_S:-60}" "$a" calibrate --backend cuda --topology full:2 --name "${k}_calibrated" \
            -o "$out/${k}_calibrated.yaml" --raw "$out/calib_raw.csv" >>"$log" 2>&1
        echo "calibrate, 2 GPUs: exit $? after $(($(date +%s) - t0)) s"
    fi
    t0=$(date +%s)
    timeout "${CALIB_S:-60}" "$a" calibrate --backend cuda --gpus 0 --name "${k}_1gpu" -o "$out/${k}_1gpu.yaml" \
        >>"$log" 2>&1
    echo "calibrate, 1 GPU: exit $? after $(($(date +%s) - t0)) s"
    grep -E "^calibrate" "$log" | tail -30
}

# measure FILE LIMIT_S ARGS...: one validate --measure-only into $out/FILE.
measure() {
    f=$1 lim=$2
    shift 2
    t1=$(date +%s)
    timeout "$lim" "$a" validate --measure-only -q -o "$out/$f" "$@" >>"$log" 2>&1
    echo "$f ($*): exit $? after $(($(date +%s) - t1)) s, $(($(grep -vc '^#' "$out/$f" 2>/dev/null || echo 1) - 1)) rows"
}

# join OUT FILES...: one file, the first's comments and header, every file's rows.
join() {
    o=$1
    shift
    { grep '^#' "$1" 2>/dev/null; grep -hv '^#' "$@" 2>/dev/null | awk 'NR == 1 || !/^backend,/'; } >"$out/$o.tmp"
    rm -f "$@"
    mv "$out/$o.tmp" "$out/$o"
}

run() {
    calibrate
    cd "$out" || exit 2
    for p in 1 2 4; do
        measure "m_p$p.csv" "${MEASURE_S:-90}" --topology full:2 --placements "$p"
    done
    join measured.csv m_p1.csv m_p2.csv m_p4.csv
    for p in 2 4 8; do
        CUDA_VISIBLE_DEVICES=0 measure "m1_p$p.csv" "${MEASURE_S:-90}" --topology full:1 --placements "$p" --size 8K:256M
    done
    join measured_1gpu.csv m1_p2.csv m1_p4.csv m1_p8.csv
    for d in fp32 bf16; do
        measure "mo_$d.csv" 60 --topology full:2 --placements 1 --dtype "$d" --count 1001,65537,1000003,16777259
    done
    join measured_odd.csv mo_fp32.csv mo_bf16.csv
    for c in 8 16; do
        measure "mc_$c.csv" 60 --topology full:2 --placements 1 --channels "$c" --size 64K:256M
    done
    join measured_channels.csv mc_8.csv mc_16.csv
    head -3 measured.csv | grep device
    grep -h -o ',NV[0-9]*$\|,unknown$' measured*.csv | sort | uniq -c
}

case ${1:-} in
run) run ;;
calibrate) calibrate ;;
*) echo "usage: $0 run|calibrate (after scripts/gpu-check.sh build here)" >&2; exit 2 ;;
esac
