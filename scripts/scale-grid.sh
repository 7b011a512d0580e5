#!/bin/sh
# The analytic backend at 16384 devices: every algorithm on four grids of 16384 devices, at
# sizes from 8 KB to 1 GB, each case one `arsim run` at its defaults, timed with its peak
# memory (GNU time). One CSV line per case on stdout, as each finishes:
#   topology,algo,size,exit,wall_s,max_rss_kb,time_us,ran
# (ran: what ran, as the row names it: auto's pick and channels, auto:torus2d/32).
# exit 2 is a refusal (a plan past what the machine or the model allows: its reason is the
# stderr line `arsim run` prints, kept in the log); 124 a case stopped at the limit.
#
#   ARSIM=./arsim LIMIT=60 JOBS=2 scripts/scale-grid.sh > grid.csv 2> grid.log
#
# TOPOLOGIES, ALGOS and SIZES (comma-separated) narrow it; JOBS runs that many at once.
set -u
bin=${ARSIM:-./arsim}
limit=${LIMIT:-60}
jobs=${JOBS:-1}
topos=${TOPOLOGIES:-ring_1d:16384,switch:16384,mesh_2d:128x128,torus_2d:256x64}
algos=${ALGOS:-ring,torus2d,2stage,center_root,naive,mesh2d,1stage,innet,auto}
sizes=${SIZES:-8K,128K,1M,1000000,64M,1G}
[ -x "$bin" ] || { echo "scale-grid.sh: no $bin (ARSIM names the binary)" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "scale-grid.sh: GNU time (/usr/bin/time) is needed" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/scale-grid-XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
# One case: its CSV line on stdout, arsim's stderr on this script's.
one() {
    t=$1 a=$2 s=$3 f=$tmp/$1.$2.$3
    /usr/bin/time -f "%e %M" -o "$f.time" timeout "$limit" "$bin" run -q --backend analytic --topology "$t" \
        --algo "$a" --size "$s" --csv "$f.csv" >/dev/null 2>"$f.err"
    rc=$?
    row=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        { print $col["time_us"] "," $col["algo"] }' "$f.csv" 2>/dev/null)
    # (GNU time puts a line before its own where the command failed)
    read -r wall rss <<EOF
$(tail -n 1 "$f.time" 2>/dev/null)
EOF
    sed "s|^|$t $a $s: |" "$f.err" >&2
    echo "$t,$a,$s,$rc,${wall:-},${rss:-},${row:-,}"
}
echo "topology,algo,size,exit,wall_s,max_rss_kb,time_us,ran"
n=0
for t in $(echo "$topos" | tr , ' '); do
    for a in $(echo "$algos" | tr , ' '); do
        for s in $(echo "$sizes" | tr , ' '); do
            one "$t" "$a" "$s" &
            n=$((n + 1))
            [ $((n % jobs)) -eq 0 ] && wait
        done
    done
done
wait
