#!/bin/sh
# valgrind memcheck of arsim's default study: no errors, no definitely-lost bytes.
#
# usage: scripts/valgrind-study.sh [ARSIM] [-- ARGS...]
#   ARSIM  the arsim binary (default: ./arsim, a build directory's)
#   ARGS   instead of the default study's arguments (none), e.g. -- --size 8K:1M
# env:     VALGRIND_STUDY=full|reduced (default reduced: see below), VALGRIND (the command)
#
# The full default study (every algorithm that fits torus_2d_4x4, 8K..1G, sim
# backend) takes long under memcheck's ~30x slowdown. The reduced study runs the
# same code paths (every algorithm, the default topology, the sim backend, every
# op kind and the table output) on sizes 8K..256K, where the plans have the same
# shape but fewer chunks. VALGRIND_STUDY=full runs the real thing.
set -eu
bin=${1:-./arsim}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
if [ $# -eq 0 ] && [ "${VALGRIND_STUDY:-reduced}" = reduced ]; then
    set -- --size 8K:256K
fi
# One log per process: the sim backend runs each simulation in a forked child,
# and memcheck follows it (and checks it) too.
logdir=${VALGRIND_LOGDIR:-valgrind-study.logs}
rm -rf "$logdir"
mkdir -p "$logdir"
start=$(date +%s)
rc=0
${VALGRIND:-valgrind} --tool=memcheck --leak-check=full --show-leak-kinds=definite \
    --errors-for-leak-kinds=definite --error-exitcode=3 --track-origins=yes \
    --log-file="$logdir/vg.%p.log" "$bin" "$@" >valgrind-study.out 2>valgrind-study.err || rc=$?
secs=$(( $(date +%s) - start ))
rows=$(grep -cv '^#' valgrind-study.out || true)
nproc=$(ls "$logdir" | wc -l)
errs=$(cat "$logdir"/*.log | sed -n 's/.*ERROR SUMMARY: \([0-9,]*\) errors.*/\1/p' | tr -d , |
       awk '{ s += $1 } END { print s + 0 }')
lost=$(cat "$logdir"/*.log | sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' | tr -d , |
       awk '{ s += $1 } END { print s + 0 }')
echo "valgrind-study: arsim $* -> exit $rc in ${secs}s; $rows table lines; $nproc processes;" \
     "errors: $errs; definitely lost: $lost bytes (logs: $logdir)"
if [ $rc -ne 0 ] || [ "$errs" -ne 0 ] || [ "$lost" -ne 0 ]; then
    grep -h -A12 -E 'Invalid|uninitialised|definitely lost in' "$logdir"/*.log | head -n 60 >&2 || true
    tail -n 5 valgrind-study.err >&2
    exit 1
fi
