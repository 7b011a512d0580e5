#!/bin/sh
# CI: build arsim with AddressSanitizer + UndefinedBehaviorSanitizer in a build
# directory of its own and run `make check` there. Any sanitizer report fails a
# test (UBSan does not recover; LeakSanitizer is on).
#
# usage: scripts/ci-sanitizers.sh [BUILDDIR]    (default: ./build-san)
# env:   JOBS (default: the CPU count), CONFIGURE_FLAGS (extra flags for configure)
set -eu
srcdir=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-build-san}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

mkdir -p "$builddir"
cd "$builddir"
start=$(date +%s)
# A source tree configured in place (scripts/setup.sh builds there, and README's
# test command runs this script after it) cannot host an out-of-tree build too:
# build from a copy of its sources then (the files git tracks and the new ones it
# does not ignore), refreshed on every run, in $builddir/src.
src=$srcdir
if [ -f "$srcdir/config.status" ]; then
    src=$(pwd)/src
    mkdir -p src
    (cd "$srcdir" && git ls-files -z --cached --others --exclude-standard) |
        tar -C "$srcdir" --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -C src -xf -
fi
[ -x "$src/configure" ] || (cd "$src" && ./autogen.sh >/dev/null 2>&1)
# The cuda backend's kernels are nvcc's and run on no GPU here: leave them out.
if [ ! -f Makefile ]; then
    # shellcheck disable=SC2086
    "$src/configure" -q --enable-sanitizers --with-cuda=no ${CONFIGURE_FLAGS:-}
fi
make -j"$jobs" >/dev/null
# Not detect_stack_use_after_return: SimGrid runs each actor on a stack of its own and
# switches between them without telling ASan (Debian's libsimgrid has no sanitizer hooks),
# so the fake stacks that check keeps mistake a live actor's locals for a returned frame
# (a Comm pointer in sim/engine.cpp read as ar_cost_op's, once that frame grew).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:check_initialization_order=1:strict_init_order=1:detect_stack_use_after_return=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# The sanitizers slow code 2-5x: give Check's per-test timeouts room to match.
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-5}
# Every test runs, but the long ones on a sample of what the plain `make check` runs in
# full: the sanitizers look for memory and undefined behaviour, which a sixteenth of the
# golden grid, a fifth of the property cases and half the fuzzing time reach as well as
# the whole, at 2-5x the cost. Left out: analytic_vs_sim.py, smoothness.py and tutorial.sh,
# which compare and run what the other tests run already (sim against analytic, the
# defaults over sizes, the commands of docs/).
export ARSIM_PREDICTIONS_SHARD=${ARSIM_PREDICTIONS_SHARD:-0/16}
export ARSIM_PROPERTY_CASES=${ARSIM_PROPERTY_CASES:-24}
export ARSIM_FUZZ_SECONDS=${ARSIM_FUZZ_SECONDS:-30}
skip=" tests/analytic_vs_sim.py tests/smoothness.py tests/tutorial.sh "
tests=
for t in $(make -s print-tests); do
    case $skip in *" $t "*) ;; *) tests="$tests $t" ;; esac
done
rc=0
make -j"$jobs" check TESTS="$tests" || rc=$?
if [ $rc -ne 0 ]; then
    for f in $(find . -name '*.log' ! -name config.log ! -name test-suite.log); do
        if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|FAIL|ERROR' "$f"; then
            echo "==== $f"; tail -n 60 "$f"
        fi
    done
fi
echo "ci-sanitizers: make check exit $rc in $(( $(date +%s) - start ))s"
exit $rc
