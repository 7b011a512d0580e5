#!/bin/sh
# Regenerate every simulated result and every figure of docs/VALIDATION.md.
#
#   scripts/reproduce.sh            build arsim (out of tree), run the sweeps, compare with the
#                                   references and the committed GPU measurements, draw the figures
#   scripts/reproduce.sh --reuse    redraw the figures from the saved CSV files; simulate nothing
#   scripts/reproduce.sh --measure  also calibrate and measure again first (a machine with 2 GPUs
#                                   and a cuda build), and compare the model with that
#
# Everything goes under OUT (default out/ at the top of the tree; nothing committed is
# touched): OUT/data (sweeps, topology listings), OUT/results (comparisons, summary.md, and
# with --measure the new calibration and measurements), OUT/figures. The committed GPU
# measurement (validate/results/measured.csv, h200_calibrated.yaml) is read, never written;
# to adopt new results, copy them over the committed files yourself and commit.
# ARSIM=/path/to/arsim uses that binary instead of building one; BUILD=DIR builds there
# (default /tmp/arsim-reproduce); JOBS=N parallel simulations (default: the CPU count);
# PYTHON=... a python3 with matplotlib.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
reuse=0
measure=0
for a in "$@"; do
    case $a in
    --reuse) reuse=1 ;;
    --measure) measure=1 ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "reproduce.sh: unknown option '$a' (--reuse, --measure)" >&2; exit 2 ;;
    esac
done

case ${ARSIM:-} in /* | '') ;; */*) ARSIM=$(pwd)/$ARSIM ;; esac
out=${OUT:-$top/out}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
data=$out/data
res=$out/results
figs=$out/figures
committed=$top/validate/results
mkdir -p "$data" "$res" "$figs"
say() { printf 'reproduce: %s\n' "$*" >&2; }

if [ $reuse = 0 ]; then
    if [ -z "${ARSIM:-}" ]; then
        build=${BUILD:-/tmp/arsim-reproduce}
        say "building arsim in $build"
        [ -x "$top/configure" ] || (cd "$top" && ./autogen.sh)
        mkdir -p "$build"
        (cd "$build" && { [ -f Makefile ] || "$top/configure" -q; } && make -j"$(nproc)" >/dev/null)
        ARSIM=$build/arsim
    fi
    [ -x "$ARSIM" ] || { echo "reproduce.sh: no arsim binary at $ARSIM" >&2; exit 2; }
    jobs=${JOBS:-$(nproc)}
    have_sweep=0
    "$ARSIM" sweep --help >/dev/null 2>&1 && have_sweep=1

    # sim_csv OUT TOPOS(comma) BUFFERS(comma) ARGS...: one CSV of simulated rows
    sim_csv() {
        out=$1 topos=$2 bufs=$3
        shift 3
        if [ $have_sweep = 1 ]; then
            "$ARSIM" sweep -q --topology "$topos" --buffer "$bufs" --jobs "$jobs" "$@" --out "$out.tmp" >/dev/null
        else
            : >"$out.tmp"
            for t in $(echo "$topos" | tr , ' '); do
                for b in $(echo "$bufs" | tr , ' '); do
                    "$ARSIM" run -q --topology "$t" --buffer "$b" "$@" --csv "$out.part" >/dev/null 2>&1 || true
                    if [ -s "$out.tmp" ]; then tail -n +2 "$out.part" >>"$out.tmp"; else cat "$out.part" >"$out.tmp"; fi
                done
            done
            rm -f "$out.part"
        fi
        mv "$out.tmp" "$out"
        say "wrote $out ($(($(grep -vc '^#' "$out") - 1)) rows)"
    }

    nelem=8,16,32,64,128,512,1024,2048,4096,8192,16384,32768,49152
    lat_topos=ring_1d_6,torus_2d_2x3,mesh_2d_2x3

    # The GPU measurement compared with: this run's (--measure), else the committed one.
    meas=$committed/measured.csv calib=$committed/h200_calibrated.yaml
    if [ $measure = 1 ]; then
        meas=$res/measured.csv calib=$res/h200_calibrated.yaml
        say "calibrating on this machine's GPUs (micro-benchmarks only)"
        "$ARSIM" calibrate --backend cuda -o "$res/h200_calibrated.yaml" --raw "$res/calib_raw.csv"
        say "measuring every algorithm x size x placement on the cuda backend"
        "$ARSIM" validate --measure-only -o "$res/measured.csv"
    fi

    say "latency sweeps (sim backend)"
    sim_csv "$data/latency_nelem.csv" "$lat_topos" hbm --algo all --count "$nelem" --dtype fp32
    sim_csv "$data/latency_bytes.csv" "$lat_topos" hbm --algo all --size 8K:1G --dtype bf16
    say "buffer-kind sweep"
    sim_csv "$data/buffer_kind.csv" torus_2d_3x2 tcm,sram,hbm --algo all --count "$nelem" --dtype fp32
    say "the earlier H100 kernel's sizes on the h100_sxm model"
    sim_csv "$data/h100_model.csv" h200_pair hbm --model h100_sxm --algo 2stage --size 32M:512M --dtype bf16

    model=h200_sxm
    [ -f "$calib" ] && model=$calib
    say "2 x H200 on model $model"
    sim_csv "$data/h200_model.csv" h200_pair hbm --model "$model" --algo all --size 8K:1G --dtype bf16

    for t in ring_1d_6 torus_2d_2x3 mesh_2d_2x3 torus_2d_3x2 h200_pair hgx_h100_8; do
        "$ARSIM" topo show "$t" >"$data/topo_$t.txt"
    done

    say "references (validate/refs) beside the model"
    "$ARSIM" validate --refs --measured "$meas" -o "$res/refs.csv" >"$res/refs.txt"
    if [ -f "$meas" ] && [ -f "$calib" ]; then
        say "model vs measured ($meas)"
        # the committed measurement is of its day's plans: rows no plan of this build rebuilds
        # (mesh2d on one channel, which its plans now take two) are named and left out
        "$ARSIM" validate --measured "$meas" --model "$calib" -o "$res/compare.csv" \
            --summary "$res/summary.md" --allow-partial >/dev/null
        cat "$res/summary.md" >&2
    else
        say "no GPU measurement ($meas + $calib): model-vs-measured skipped"
    fi
fi

say "figures"
# the busbw figure draws the GPU rows beside the model: the committed ones unless measured here
[ -f "$res/measured.csv" ] || cp "$top/validate/results/measured.csv" "$res/measured.csv"
# A python with matplotlib (Debian's python3-matplotlib lives under /usr/bin/python3).
py=
for p in ${PYTHON:-} python3 /usr/bin/python3; do
    if "$p" -c 'import matplotlib' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "reproduce.sh: no python3 with matplotlib (apt-get install python3-matplotlib)" >&2; exit 2; }
"$py" "$top/plots/figures.py" --data "$data" --results "$res" --out "$figs"
