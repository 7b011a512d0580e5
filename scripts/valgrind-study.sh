#!/bin/sh
# valgrind memcheck of arsim's default study: no errors, no definitely-lost bytes.
#
# usage: scripts/valgrind-study.sh [ARSIM] [-- ARGS...]
#   ARSIM  the arsim binary (default: ./arsim, a build directory's)
#   ARGS   instead of the default study's arguments (none), e.g. -- --size 8K:1M
# env:     VALGRIND_STUDY=full|reduced (default full), VALGRIND (the command)
#
# full: the default study itself (every algorithm that fits torus_2d_4x4, 8K..1G,
# sim backend): about 12 minutes under memcheck on a 2-core machine.
# reduced: the same algorithms, topology and backend at 8K..256K (plans of the same
# shape with fewer chunks): under a minute.
set -eu
bin=${1:-./arsim}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
if [ $# -eq 0 ] && [ "${VALGRIND_STUDY:-full}" = reduced ]; then
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
