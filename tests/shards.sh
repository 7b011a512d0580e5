#!/bin/sh
# The shipped ways to cut a large study into shards give the whole sweep: examples/
# shards-parallel.sh under GNU parallel (skipped, 77, where it is not installed), and
# examples/shards-slurm.sbatch run as Slurm runs an array's tasks (each with its
# SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT and SLURM_CPUS_PER_TASK), then merged.
# Each must hold exactly the rows of one plain sweep (every column but sim_wall_s).
# Run by `make check` (TESTS); ARSIM names the binary (default ./arsim).
set -u
. "${srcdir:-.}/tests/lib.sh"
arsim_test shards
examples=$(cd "${srcdir:-.}" && pwd)/examples
STUDY="--backend analytic --topology ring_1d:4,torus_2d:2x3 --algo all --size 8K:1M --dtype bf16,fp32"
export STUDY ARSIM="$bin"
rows() { tail -n +2 "$1" | awk -F, -v OFS=, '{ NF = NF - 1; print }' | sort; }

# shellcheck disable=SC2086
"$bin" sweep $STUDY -q --out "$tmp/whole.csv" || fail "the plain sweep exited $?"
n=$(($(wc -l <"$tmp/whole.csv") - 1))
[ "$n" -ge 50 ] || fail "the plain sweep wrote $n rows, want the whole study"

# Slurm: three array tasks, the second run twice (a requeued task goes on from its CSV)
mkdir "$tmp/slurm"
for i in 0 1 2 1; do
    (cd "$tmp/slurm" && SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=3 SLURM_CPUS_PER_TASK=2 \
        bash "$examples/shards-slurm.sbatch") || fail "slurm task $i exited $?"
done
"$bin" merge "$tmp"/slurm/shard_0.csv "$tmp"/slurm/shard_1.csv "$tmp"/slurm/shard_2.csv -o "$tmp/slurm.csv" 2>/dev/null ||
    fail "merging the slurm shards exited $?"
[ "$(rows "$tmp/slurm.csv")" = "$(rows "$tmp/whole.csv")" ] || fail "the slurm shards merged differ from the plain sweep"
echo "shards: slurm array of 3 merged: $n rows, the plain sweep's"

if ! command -v parallel >/dev/null 2>&1; then
    echo "shards: GNU parallel not installed: its example skipped"
    exit 77
fi
SHARDS=4 PARALLEL="--jobs 2" sh "$examples/shards-parallel.sh" "$tmp/parallel.csv" >/dev/null 2>&1 ||
    fail "examples/shards-parallel.sh exited $?"
[ "$(rows "$tmp/parallel.csv")" = "$(rows "$tmp/whole.csv")" ] || fail "the GNU parallel shards merged differ from the plain sweep"
echo "shards: GNU parallel, 4 shards merged: $n rows, the plain sweep's"
