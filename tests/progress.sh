#!/bin/sh
# A run over two seconds on a terminal says how it goes (the time simulated, ops done of
# the plan's, the wall time left) on its case's line, and a sweep's bar counts the runs
# in flight by their ops done; silent under -q and when stderr is not a terminal. The terminal is script(1)'s. Skipped (77) without script or the sim
# backend. Run by `make check` (TESTS); ARSIM names the binary (default ./arsim).
set -u
. "${srcdir:-.}/tests/lib.sh"
arsim_test progress
command -v script >/dev/null 2>&1 || { echo "progress: skipped (no script(1))"; exit 77; }
"$bin" run --backend sim --topology ring_1d:2 --algo ring --size 8K -q >/dev/null 2>&1 ||
    { echo "progress: skipped (no sim backend)"; exit 77; }
# about 5 s on two cores: 1 MB in 16-byte pieces, one channel, every rank's ops (a plan of
# 1.5 M ops; rank 0's alone, on the torus's cycle, take under a second)
long="run --backend sim --algo ring --size 1M --chunk 16 --channels 1 --symmetry off"
script -qec "$bin $long" "$tmp/tty.txt" >/dev/null 2>&1 </dev/null || fail "the run on a terminal exited $?"
tr '\r' '\n' <"$tmp/tty.txt" | grep -aqE '^\[1/1\] ring 1M: simulated [0-9.]+ us, [0-9.]+[kM]? of [0-9.]+M ops \([0-9]+%\), ~[0-9]+ s left' ||
    fail "no progress line on the terminal: $(tr '\r' '\n' <"$tmp/tty.txt" | tail -n 3)"
script -qec "$bin $long -q" "$tmp/quiet.txt" >/dev/null 2>&1 </dev/null || fail "the quiet run exited $?"
! grep -aq 'simulated' "$tmp/quiet.txt" || fail "-q still printed progress"
# shellcheck disable=SC2086
"$bin" $long 2>"$tmp/err.txt" >/dev/null || fail "the run to a file exited $?"
[ ! -s "$tmp/err.txt" ] || fail "progress on stderr that is not a terminal: $(head -c 200 "$tmp/err.txt")"
# a sweep's bar counts the runs in flight by their ops, with workers and without
for jobs in 2 1; do
    script -qec "$bin sweep ${long#run } --jobs $jobs --out $tmp/s$jobs.csv" "$tmp/sweep.txt" >/dev/null 2>&1 </dev/null ||
        fail "the sweep (--jobs $jobs) on a terminal exited $?"
    tr '\r' '\n' <"$tmp/sweep.txt" | grep -aqE '^\[#* *\] 0/1 runs, 0 rows, [0-9]+s, eta [0-9]+s, running [0-9.]+[kM]? of [0-9.]+M ops' ||
        fail "no runs in flight on the sweep's bar (--jobs $jobs): $(tr '\r' '\n' <"$tmp/sweep.txt" | tail -n 2)"
done
echo "progress: shown on a terminal (run, sweep), silent under -q and into a file"
