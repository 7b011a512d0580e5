#!/bin/sh
# The GPU half of the validation, on a machine with 2 GPUs (no SimGrid there):
# calibrate from micro-benchmarks, then measure every algorithm x size x placement.
#
#   validate/gpu-run.sh build     here: a GPU-only arsim in out/vrun (libyaml, libcudart beside it)
#   validate/gpu-run.sh run       there: writes $OUT (or out/validate): h200_calibrated.yaml,
#                                 calib_raw.csv, measured.csv, machine.txt, gpu-run.log
#   validate/gpu-run.sh calibrate there: only the micro-benchmarks (about 10 s, limit 60 s):
#                                 h200_calibrated.yaml, calib_raw.csv, machine.txt, gpu-run.log
#
# Each placement (1, 2, 4 ranks per GPU) runs as its own process with its own time limit,
# so one that overruns costs only its own rows. Then, here:
#   arsim validate --measured out/validate/measured.csv --model out/validate/h200_calibrated.yaml
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0); the cuda backend never uses it.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
run_dir=$top/out/vrun

build() {
    b=$top/out/vbuild
    mkdir -p "$b" "$run_dir" && cd "$b" || exit 2
    [ -f Makefile ] || "$top/configure" -q --without-simgrid || exit 2
    make -j"$(nproc)" arsim >build.log 2>&1 || { tail -30 build.log; exit 2; }
    cp arsim "$run_dir/"
    cp -L /usr/lib/x86_64-linux-gnu/libyaml-0.so.2 "$run_dir/"
    cp -L /usr/local/cuda/lib64/libcudart.so.13 "$run_dir/" 2>/dev/null || true
    echo "built $run_dir/arsim"
}

calibrate() {
    out=${OUT:-$top/out/validate}
    mkdir -p "$out"
    export LD_LIBRARY_PATH="$run_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ARSIM_DATADIR="$top" NCCL_NVLS_ENABLE=0
    { date -u; nvidia-smi -L; nvidia-smi topo -m; } >"$out/machine.txt" 2>&1
    t0=$(date +%s)
    timeout "${CALIB_S:-60}" "$run_dir/arsim" calibrate --backend cuda -o "$out/h200_calibrated.yaml" \
        --raw "$out/calib_raw.csv" >>"$out/gpu-run.log" 2>&1
    echo "calibrate: exit $? after $(($(date +%s) - t0)) s"
    grep -E "^calibrate" "$out/gpu-run.log" | tail -16
}

run() {
    out=${OUT:-$top/out/validate}
    mkdir -p "$out"
    export LD_LIBRARY_PATH="$run_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ARSIM_DATADIR="$top" NCCL_NVLS_ENABLE=0
    a=$run_dir/arsim
    log=$out/gpu-run.log
    { date -u; nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } \
        >"$out/machine.txt" 2>&1
    cat "$out/machine.txt"
    t0=$(date +%s)
    timeout "${CALIB_S:-30}" "$a" calibrate --backend cuda -o "$out/h200_calibrated.yaml" --raw "$out/calib_raw.csv" \
        >>"$log" 2>&1
    echo "calibrate: exit $? after $(($(date +%s) - t0)) s"
    grep -E "^calibrate" "$log" | tail -14
    # Time limits per placement: about twice what each took on 2 x H200 (14, 19, 39 s),
    # so the whole run stays within about 150 s.
    for p in 1 2 4; do
        t1=$(date +%s)
        case $p in 1) lim=30 ;; 2) lim=35 ;; *) lim=60 ;; esac
        timeout "${MEASURE_S:-$lim}" "$a" validate --measure-only --placements "$p" -o "$out/measured_p$p.csv" \
            >>"$log" 2>&1
        echo "placement $p rank(s) per GPU: exit $? after $(($(date +%s) - t1)) s, $(grep -vc '^#' "$out/measured_p$p.csv" 2>/dev/null) lines"
    done
    # One file: the first's comments and header, every file's rows.
    {
        grep '^#' "$out/measured_p1.csv" 2>/dev/null
        grep -hv '^#' "$out"/measured_p*.csv 2>/dev/null | awk 'NR == 1 || !/^backend,/'
    } >"$out/measured.csv"
    rm -f "$out"/measured_p*.csv
    echo "measured.csv: $(($(grep -vc '^#' "$out/measured.csv") - 1)) rows; total $(($(date +%s) - t0)) s"
}

case ${1:-} in
build) build ;;
run) run ;;
calibrate) calibrate ;;
*) echo "usage: $0 build|run|calibrate" >&2; exit 2 ;;
esac
