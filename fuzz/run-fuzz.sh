#!/bin/sh
# Run one libFuzzer target for a bounded time: FUZZ_RUNS executions, at most
# FUZZ_SECONDS seconds. Seeds: the committed corpus plus every shipped file that
# fits the target. New inputs go to WORKDIR/corpus-TARGET (never into the source
# tree; `make fuzz-merge` minimises them into fuzz/corpus/). Fails on any crash,
# leak, timeout, out-of-memory or sanitizer report, and when fewer than FUZZ_RUNS
# executions were reached.
#
# usage: run-fuzz.sh TARGET BINARY SRCDIR WORKDIR
set -eu
target=$1 bin=$2 srcdir=$3 work=$4
runs=${FUZZ_RUNS:-1000000}
secs=${FUZZ_SECONDS:-1800}
timeout=${FUZZ_TIMEOUT:-10}
maxlen=${FUZZ_MAX_LEN:-16384}

seed=$work/seed-$target
corpus=$work/corpus-$target
art=$work/artifacts-$target
mkdir -p "$seed" "$corpus" "$art"
rm -f "$seed"/*
case $target in
topo|model)
    for f in "$srcdir"/topologies/*.yaml "$srcdir"/model/*.yaml "$srcdir"/tests/data/*.yaml; do
        [ -f "$f" ] && cp "$f" "$seed/$(basename "$(dirname "$f")")-$(basename "$f")"
    done
    dict="-dict=$srcdir/fuzz/yaml.dict" ;;
*)
    dict= ;;
esac
[ -f "${dict#-dict=}" ] || dict=

log=$work/fuzz-$target.log
echo "  FUZZ     $target: $runs runs, at most ${secs}s (log: $log)"
set +e
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
"$bin" -runs="$runs" -max_total_time="$secs" -timeout="$timeout" -rss_limit_mb=2048 \
    -max_len="$maxlen" -print_final_stats=1 -artifact_prefix="$art/" $dict \
    "$corpus" "$srcdir/fuzz/corpus/$target" "$seed" >"$log" 2>&1
rc=$?
set -e
done_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
secs_used=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -n 1)
eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
echo "  FUZZ     $target: ${done_runs:-0} executions in ${secs_used:-?}s (${eps:-?} exec/s, $cov), exit $rc"
if [ $rc -ne 0 ]; then
    echo "fuzz $target: FAILED (exit $rc); the report:" >&2
    grep -E 'ERROR|SUMMARY|==[0-9]+==|runtime error|invariant|Test unit written' "$log" | head -n 20 >&2
    exit 1
fi
if [ "${done_runs:-0}" -lt "$runs" ]; then
    echo "fuzz $target: only ${done_runs:-0} of $runs executions within ${secs}s" >&2
    exit 1
fi
