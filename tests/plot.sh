#!/bin/sh
# arsim plot draws every kind of CSV arsim writes, and refuses in one line (exit 2,
# nothing written) what it cannot draw. A figure counts as drawn when it is a PNG with
# more than 0.2% of its pixels in colour: axes, grid and text are grey (a figure with
# axes only has none in colour), the data lines are not.
# Skipped (77) without python3-matplotlib. Run by `make check`.
set -u
. "${srcdir:-.}/tests/lib.sh"
arsim_test plot
srcdir=$(cd "${srcdir:-.}" && pwd)
cd "$tmp" || exit 1
printf 'bytes\n' >probe.csv
"$bin" plot probe.csv -o probe.png 2>&1 | grep -q 'matplotlib is not installed\|cannot run' &&
    { echo "plot: skipped (no python3 with matplotlib)"; exit 77; }
py=/usr/bin/python3
[ -x "$py" ] || py=python3

# The share of pixels in colour (not grey: channels apart by more than 0.2), in tenths
# of a percent.
ink() {
    "$py" - "$1" <<'PY'
import sys
import matplotlib.image as im
rgb = im.imread(sys.argv[1])[..., :3]
print(int(1000 * ((rgb.max(axis=2) - rgb.min(axis=2)) > 0.2).mean()))
PY
}

drawn() { # FILE.csv FILE.png [args]: exit 0, a PNG with ink
    csv=$1 png=$2
    shift 2
    "$bin" plot "$csv" -o "$png" "$@" 2>err.txt || fail "plot $csv $*: exit $?: $(cat err.txt)"
    [ -s "$png" ] || fail "plot $csv: no $png"
    [ "$(head -c 4 "$png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "plot $csv: $png is not a PNG"
    i=$(ink "$png")
    [ "$i" -gt 2 ] || fail "plot $csv $*: $png is blank ($i/1000 of its pixels in colour)"
    echo "plot: $(basename "$csv") $* -> $png ($i/1000 in colour; $(sed 's/^arsim plot: //' err.txt))"
}

refused() { # fragment FILE.csv [args]: exit 2, one line, no PNG
    frag=$1 csv=$2
    shift 2
    rm -f out.png
    "$bin" plot "$csv" -o out.png "$@" >/dev/null 2>err.txt
    rc=$?
    [ $rc = 2 ] || fail "plot $csv $*: exit $rc, want 2"
    [ "$(wc -l <err.txt)" = 1 ] && grep -qF -- "$frag" err.txt || fail "plot $csv $*: stderr: $(cat err.txt)"
    [ -e out.png ] && fail "plot $csv $*: wrote out.png"
    ls .arsim-plot-* >/dev/null 2>&1 && fail "plot $csv $*: left a temporary file"
    echo "plot: $csv $*: refused ($(cat err.txt))"
}

# run and sweep rows: busbw (default) and time, one line per algorithm
"$bin" run --backend analytic --topology ring_1d:8 --algo ring,center_root,naive --size 8K:64M -q --csv run.csv >/dev/null ||
    fail "run --csv: exit $?"
drawn run.csv run.png
drawn run.csv run_time.png --y time
"$bin" sweep --backend analytic --topology ring_1d:8,torus_2d:4x4 --algo ring,center_root --size 8K:16M \
    --out sweep.csv -q || fail "sweep: exit $?"
drawn sweep.csv sweep.png
# measured rows and validate's comparisons, as committed
drawn "$srcdir/validate/results/measured.csv" measured.png
drawn "$srcdir/validate/results/compare.csv" compare.png
drawn "$srcdir/validate/results/refs.csv" refs.png
# bench rows (bench --csv's columns), with NCCL's line beside ours
{
    echo "size_bytes,count,dtype,redop,root,algo,channels,chunk_bytes,nranks,ngpus,time_us,algbw_gbps,busbw_gbps,wrong,nccl_time_us,nccl_busbw_gbps,speedup_vs_nccl,device"
    for s in 8192 65536 1048576 16777216 268435456; do
        for a in ring 1stage; do
            echo "$s,$((s / 2)),bf16,sum,-1,$a,8,65536,2,2,$((s / 20000 + 5)).0,1.0,$((s / 1000000 + 3)).5,0,$((s / 18000 + 6)).0,$((s / 1100000 + 2)).5,0.9,NVIDIA H100"
        done
    done
} >bench.csv
drawn bench.csv bench.png

# what it cannot draw
printf 'a,b,c\n1,2,3\n' >other.csv
refused "not a CSV arsim plots" other.csv
head -n 1 run.csv >empty.csv
refused "nothing to plot" empty.csv
printf '# only a comment\n' >comment.csv
refused "nothing to plot" comment.csv
refused "--y 'error'" run.csv --y error
refused "cannot read" missing.csv
refused "the same file as the input" run.csv -o run.csv
refused "unknown option" run.csv --bogus
refused "empty file name" run.csv -o ''
mkdir adir
refused "a directory, not a file" run.csv -o adir
# a symlink's target is written, the link stays
ln -s real.png link.png
"$bin" plot run.csv -o link.png 2>err.txt || fail "plot -o a symlink: $(cat err.txt)"
[ -L link.png ] && [ -s real.png ] || fail "plot -o a symlink: the link replaced or its target not written"
echo "plot: every kind drawn, every bad input refused"
