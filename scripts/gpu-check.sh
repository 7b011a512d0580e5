#!/bin/sh
# Build and run every GPU test of the cuda backend, then the benchmark beside NCCL.
#
#   scripts/gpu-check.sh [build|run|all]      (default: all)
#
# build: on a machine with the build's dependencies (libyaml, autotools, nvcc),
#        a GPU-only arsim out of tree in .devcarry/ (configure --without-simgrid),
#        with libyaml and libcudart copied beside the binaries.
# run:   on the GPU machine (which has nvcc and NCCL but no libyaml), with what
#        .devcarry/ holds: the GPU tests (hw/gpu_test), `arsim run --check` on
#        the cuda backend, then `arsim bench`, then PyTorch's symmetric-memory
#        allreduces beside NCCL where torch is installed (bench/symm_mem.py). Logs go to $OUT (or out/gpu),
#        a short table is printed last.
# BENCH_ARGS overrides the benchmark's arguments; BENCH_ALGOS its --algo list.
# NVLink multicast stays off (NCCL_NVLS_ENABLE=0); the backend never uses it.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
dc="$top/.devcarry"
what=${1:-all}
export NCCL_NVLS_ENABLE=0

build() {
    mkdir -p "$dc" && cd "$dc" || exit 2
    src=$top
    if [ -f "$top/config.status" ]; then
        # autoconf refuses an out-of-tree build of a tree configured in place: build from
        # a copy of the sources (tracked and new files, git's ignored ones left out).
        src=$dc/src
        rm -rf "$src" && mkdir -p "$src" || exit 2
        (cd "$top" && git ls-files -co --exclude-standard | tar -cf - -T -) | (cd "$src" && tar -xf -) || exit 2
        (cd "$src" && ./autogen.sh >/dev/null 2>&1) || { echo "gpu-check: autogen failed in $src"; exit 2; }
    fi
    [ -f Makefile ] || "$src/configure" -q --without-simgrid || exit 2
    # libtool leaves -lstdc++ out of the convenience library's dependencies.
    make -j"$(nproc)" arsim hw/gpu_test LIBS="-lm -lstdc++" >build.log 2>&1 || { tail -30 build.log; exit 2; }
    for l in libyaml-0.so.2; do cp -L "/usr/lib/x86_64-linux-gnu/$l" "$dc/" 2>/dev/null || true; done
    cp -L /usr/local/cuda/lib64/libcudart.so.13 "$dc/" 2>/dev/null || true
    echo "built: $dc/arsim $dc/hw/gpu_test"
}

run() {
    out=${OUT:-$top/out/gpu}
    mkdir -p "$out"
    cd "$top" || exit 2
    export LD_LIBRARY_PATH="$dc${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export ARSIM_DATADIR="${ARSIM_DATADIR:-$top}" # shipped topologies and models from this tree
    arsim="$dc/arsim"
    [ -x "$arsim" ] || { echo "no $arsim: run '$0 build' first"; exit 2; }
    { date -u; nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem --format=csv; } >"$out/machine.txt" 2>&1
    head -3 "$out/machine.txt"
    status=0
    echo "== GPU tests (hw/gpu_test)"
    timeout 300 "$dc/hw/gpu_test" -v >"$out/gpu_test.log" 2>&1; rc=$?
    grep -E "^FAIL|^#|PASS|SKIP" "$out/gpu_test.log" | head -40
    [ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1
    echo "== arsim run --backend cuda --check"
    n=$(nvidia-smi -L 2>/dev/null | wc -l)
    timeout 120 "$arsim" run --backend cuda --topology "full:${n:-2}" --algo all --size 4K:4M --check >"$out/run_check.txt" 2>&1 || status=1
    tail -4 "$out/run_check.txt"
    echo "== arsim bench"
    algos=${BENCH_ALGOS:-auto,1stage,2stage,ring,x-oneshot,x-pushshot,x-twoshot}
    # shellcheck disable=SC2086
    timeout 400 "$arsim" bench --backend cuda --algo "$algos" --dtype bf16 --size 8K:1G --check --csv "$out/bench.csv" \
        ${BENCH_ARGS:-} >"$out/bench.txt" 2>&1 || status=1
    cat "$out/bench.txt"
    echo "== PyTorch's symmetric-memory allreduces beside NCCL (bench/symm_mem.py; skipped without torch)"
    timeout 400 python3 "$top/bench/symm_mem.py" --size 8K:1G --csv "$out/symm_mem.csv" >"$out/symm_mem.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 77 ] || status=1
    tail -3 "$out/symm_mem.log"
    return $status
}

case $what in
build) build ;;
run) run ;;
all) build && run ;;
*) echo "usage: $0 [build|run|all]"; exit 2 ;;
esac
