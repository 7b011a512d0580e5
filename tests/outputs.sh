#!/bin/sh
# Nothing a user names as an output is destroyed, nothing computed is silently lost:
#   - a device node named by --json stays a device (as root: mknod), a FIFO stays a FIFO;
#   - a symlink stays a link and its target is written, with the target's permissions;
#   - "-" writes to standard output (the table then goes to standard error);
#   - two outputs naming one file are refused (exit 2), merge into one of its inputs too;
#   - a full device or a file size limit: exit 1 naming the file and the reason, the whole
#     rows kept and no torn row;
#   - a second sweep on a locked --out exits 2 naming it;
#   - a worker killed mid-sweep loses nothing (its case runs again);
#   - merge takes more than 1024 inputs.
# Run by `make check` (TESTS); ARSIM names the binary (default ./arsim).
set -u
. "${srcdir:-.}/tests/lib.sh"
arsim_test outputs
cd "$tmp" || exit 99
fields() { awk -F, '{ print NF }' "$1" | sort -u | tr '\n' ' '; }
ncols="$(echo "$("$bin" run --backend analytic --topology ring_1d:2 --algo ring --size 8K -q --csv -)" | head -n 1 |
    awk -F, '{ print NF }') "
q="--backend analytic --algo ring --size 8K -q"

# a device node (needs root) and a FIFO, named by --json: written in place, never replaced
if [ "$(id -u)" = 0 ] && mknod -m 666 mynull c 1 3 2>/dev/null; then
    # shellcheck disable=SC2086
    "$bin" sweep $q --out s.csv --json mynull || fail "sweep --json mynull exited $?"
    [ -c mynull ] || fail "the device node mynull was replaced"
fi
mkfifo fifo
cat fifo >fifo.txt &
# shellcheck disable=SC2086
"$bin" run $q --json fifo >/dev/null || fail "run --json fifo exited $?"
wait
[ -p fifo ] || fail "the FIFO was replaced"
grep -q '"algo": "ring"' fifo.txt || fail "nothing came through the FIFO"

# a symlink: its target is written with its permissions, the link stays
echo old >target.csv
chmod 640 target.csv
ln -s target.csv link.csv
# shellcheck disable=SC2086
"$bin" run $q --csv link.csv >/dev/null || fail "run --csv link.csv exited $?"
[ -L link.csv ] || fail "the symlink was replaced"
[ "$(stat -c %a target.csv)" = 640 ] || fail "target.csv lost its permissions: $(stat -c %a target.csv)"
grep -q '^analytic,' target.csv || fail "target.csv was not written"

# "-": the CSV on stdout, the table on stderr
# shellcheck disable=SC2086
"$bin" run $q --csv - 2>table.txt >stdout.csv || fail "run --csv - exited $?"
head -1 stdout.csv | grep -q '^backend,topology' || fail "--csv - did not write the CSV to stdout"
grep -q 'busbw' table.txt || fail "--csv -: the table is not on stderr"
[ ! -e ./- ] || fail "--csv - created a file named '-'"

# one file named twice
# shellcheck disable=SC2086
"$bin" run $q --csv x.csv --json ./x.csv 2>err.txt
[ $? = 2 ] || fail "run --csv X --json X: want exit 2"
grep -q 'same file' err.txt || fail "run --csv X --json X: $(cat err.txt)"
# shellcheck disable=SC2086
"$bin" sweep $q --out y.csv --json y.csv 2>/dev/null
[ $? = 2 ] || fail "sweep --out X --json X: want exit 2"
"$bin" merge s1.csv -o s1.csv 2>/dev/null
[ $? = 2 ] || fail "merge A -o A: want exit 2"

# a full device: exit 1 naming it
if [ -w /dev/full ]; then
    # shellcheck disable=SC2086
    "$bin" run $q --csv /dev/full >/dev/null 2>err.txt
    [ $? = 1 ] || fail "run --csv /dev/full: want exit 1"
    grep -q '/dev/full: write failed: No space left on device' err.txt || fail "run --csv /dev/full: $(cat err.txt)"
    # shellcheck disable=SC2086
    "$bin" sweep $q --out /dev/full 2>err.txt
    [ $? = 1 ] || fail "sweep --out /dev/full: want exit 1"
fi

# a file size limit (SIGXFSZ ignored): exit 1, whole rows only
set -- --backend analytic --algo all --topology full:8 --size 8K:1G -q
(ulimit -f 1; trap '' XFSZ; "$bin" run "$@" --csv big.csv >/dev/null 2>err.txt)
[ $? = 1 ] || fail "run --csv under ulimit -f: want exit 1"
grep -q 'File too large' err.txt || fail "run --csv under ulimit -f: $(cat err.txt)"
[ "$(fields big.csv)" = "$ncols" ] || fail "run --csv under ulimit -f left a torn row: $(fields big.csv)"
(ulimit -f 1; trap '' XFSZ; "$bin" sweep "$@" --out big2.csv 2>err.txt)
[ $? = 1 ] || fail "sweep under ulimit -f: want exit 1"
[ "$(fields big2.csv)" = "$ncols" ] || fail "sweep under ulimit -f left a torn row: $(fields big2.csv)"

# one writer per --out
set -- --backend analytic --topology torus_2d:16x16 --algo ring,torus2d,center_root --size 8K:1G --channels 1,2,4,8
"$bin" sweep "$@" --out locked.csv -q 2>/dev/null &
pid=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s locked.csv ] && break; sleep 0.2; done
"$bin" sweep --backend analytic --algo ring --size 8K --out locked.csv -q 2>err.txt
rc=$?
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
if [ -s locked.csv ] && grep -q . err.txt; then
    [ $rc = 2 ] || fail "a second sweep on a locked --out: want exit 2, got $rc"
    grep -q 'another sweep is writing it' err.txt || fail "second sweep: $(cat err.txt)"
fi

# a worker killed mid-sweep: its case runs again, no row is missing
set -- --backend analytic --topology torus_2d:16x16,ring_1d:64 --algo ring,torus2d,center_root --size 8K:64M
"$bin" sweep "$@" --out ref.csv -q || fail "the reference sweep exited $?"
"$bin" sweep "$@" --out jobs.csv --jobs 2 -q 2>err.txt &
pid=$!
sleep 0.5
kid=$(pgrep -P "$pid" | head -1)
[ -n "$kid" ] && kill -9 "$kid"
wait "$pid" || fail "a sweep whose worker was killed exited $?: $(cat err.txt)"
cut -d, -f1-$((ncols - 1)) ref.csv | sort >a.txt
cut -d, -f1-$((ncols - 1)) jobs.csv | sort >b.txt
cmp -s a.txt b.txt || fail "a killed worker lost rows: $(diff a.txt b.txt | head -3)"

# merge takes any number of inputs
# shellcheck disable=SC2086
"$bin" sweep $q --out one.csv || fail "sweep exited $?"
i=0
while [ $i -lt 1100 ]; do cp one.csv "m$i.csv"; i=$((i + 1)); done
"$bin" merge m*.csv -o merged.csv 2>err.txt || fail "merge of 1100 files exited $?"
grep -q '1 rows from 1100 files' err.txt || fail "merge of 1100 files: $(cat err.txt)"
# --resume keys on the root: another --root is another row
r="--backend analytic --topology ring_1d:4 --algo center_root --size 8K --out root.csv"
# shellcheck disable=SC2086
"$bin" sweep $r --root 1 2>/dev/null && "$bin" sweep $r --root 2 --resume 2>err.txt || fail "sweep --root: exit $?"
grep -q '1 rows written to root.csv (0 already there' err.txt || fail "--resume with another --root: $(cat err.txt)"
[ "$(cut -d, -f10 root.csv | tail -n +2 | sort | tr '\n' ' ')" = "1 2 " ] || fail "root column: $(cut -d, -f10 root.csv)"
# --root all: every rank once; --resume runs only the roots not there
# shellcheck disable=SC2086
"$bin" sweep $r --root all --resume 2>err.txt || fail "sweep --root all: exit $?"
grep -q '2 rows written to root.csv (2 already there' err.txt || fail "--root all --resume: $(cat err.txt)"
[ "$(cut -d, -f10 root.csv | tail -n +2 | sort | tr '\n' ' ')" = "0 1 2 3 " ] || fail "--root all: $(cut -d, -f10 root.csv)"

# --timeline (sim): one row per op of the plan, through a symlink to its target; a path that
# cannot be written is refused before anything runs, an existing file kept as it was
if "$bin" list backends | grep -q '^sim  *yes'; then
    t="--backend sim --topology ring_1d:4 --algo ring --size 64K --channels 2 -q"
    echo old >tl_target.csv
    ln -s tl_target.csv tl_link.csv
    # shellcheck disable=SC2086
    "$bin" run $t --timeline tl_link.csv >/dev/null || fail "run --timeline exited $?"
    [ -L tl_link.csv ] || fail "--timeline replaced its symlink"
    head -1 tl_target.csv | grep -q '^gpu,rank,chan,op,code,target,start_ns,end_ns$' ||
        fail "--timeline header: $(head -1 tl_target.csv)"
    # shellcheck disable=SC2086
    ops=$("$bin" run $t --dump-plan | sed -n 's/^plan ring: .*, \([0-9]*\) ops$/\1/p')
    [ "$(tail -n +2 tl_target.csv | wc -l)" = "$ops" ] ||
        fail "--timeline: $(tail -n +2 tl_target.csv | wc -l) rows for $ops ops"
    # shellcheck disable=SC2086
    "$bin" run $t --timeline no/such/dir/t.csv 2>err.txt >/dev/null
    [ $? = 2 ] && grep -q 'no/such/dir/t.csv: cannot write' err.txt || fail "--timeline no/such/dir: $(cat err.txt)"
fi

echo "outputs: every output check holds"
