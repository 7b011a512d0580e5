#!/bin/sh
# A sweep too long for one run, cut into shards that GNU parallel runs at once (on this
# machine, or on several with --sshloginfile), then joined into one CSV. Each shard
# is `arsim sweep --shard I/N`: the runs numbered I modulo N of the whole sweep, flushed
# row by row, so a shard stopped half-way is taken up again by running it once more
# (--resume runs only what its CSV lacks).
#
# usage: examples/shards-parallel.sh [OUT.csv]             (default: study.csv)
# env:   SHARDS   shards (default 8)
#        PARALLEL GNU parallel's own options (default "--jobs 2"); over machines, e.g.
#                 "--sshloginfile nodes.txt --workdir . --return shard{}.csv --cleanup"
#        STUDY    the sweep's selectors (default: every algorithm on three 16-device
#                 topologies, 8K..1G, bf16 and fp32)
#        ARSIM    the arsim to run (default: arsim on PATH)
set -eu
out=${1:-study.csv}
shards=${SHARDS:-8}
arsim=${ARSIM:-arsim}
study=${STUDY:-"--topology torus_2d_4x4,mesh_2d:4x4,ring_1d:16 --algo all --size 8K:1G --dtype bf16,fp32"}
command -v parallel >/dev/null 2>&1 || { echo "shards-parallel: GNU parallel is not installed (apt-get install parallel)" >&2; exit 2; }
dir=$(dirname "$out")
# shellcheck disable=SC2086
parallel --will-cite --halt now,fail=1 ${PARALLEL:---jobs 2} \
    "$arsim" sweep $study -q --resume --shard {}/"$shards" --out "$dir/shard{}.csv" ::: $(seq 0 $((shards - 1)))
shard_files=$(seq 0 $((shards - 1)) | sed "s|.*|$dir/shard&.csv|")
# shellcheck disable=SC2086
"$arsim" merge $shard_files -o "$out"
