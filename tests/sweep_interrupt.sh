#!/bin/sh
# An interrupted sweep loses nothing: start `arsim sweep`, stop it mid-way with
# SIGINT, SIGTERM or SIGKILL (one worker and two), then check that
#   - every row on disk is whole (the header's fields, a line of the uninterrupted sweep;
#     only SIGKILL may leave a torn last line, which --resume must cut),
#   - --resume keeps those rows byte for byte, runs only the missing ones
#     (its summary: "N rows written ... (M already there"), and
#   - the final CSV holds exactly the uninterrupted sweep's rows (every column
#     but sim_wall_s, the backend's own wall time).
# Run by `make check` (TESTS); ARSIM names the binary (default ./arsim).
set -u
bin=${ARSIM:-./arsim}
[ -x "$bin" ] || { echo "sweep_interrupt: no $bin" >&2; exit 99; }
"$bin" sweep --help >/dev/null 2>&1 || { echo "sweep_interrupt: this arsim has no sweep" >&2; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/arsim-sweep-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "sweep_interrupt: FAIL: $*" >&2; exit 1; }

# A sweep of about 60 runs taking a few seconds: the sim backend when built
# (larger sizes take longer; two channels, as the defaults' searches and their
# plans of thousands of ops would take minutes over the 13 sweeps here), else the
# analytic one over more rows.
if "$bin" run --backend sim --topology ring_1d:2 --algo ring --size 8K -q >/dev/null 2>&1; then
    set -- --backend sim --topology torus_2d:4x4,ring_1d:8 --algo ring,torus2d,center_root --size 256K:128M \
        --channels 2
else
    set -- --backend analytic --topology torus_2d:4x4,ring_1d:8,torus_2d:8x8 --algo ring,torus2d,center_root \
        --size 8K:1G --channels 1,2,4
fi

# Rows without the last column (sim_wall_s), sorted: what two runs must share.
# Rows have as many fields as the header of the uninterrupted sweep ($ncols).
norm() { tail -n +2 "$1" | awk -F, -v OFS=, -v n="$ncols" 'NF == n { NF = n - 1; print }' | sort; }
nrows() { if [ -f "$1" ]; then tail -n +2 "$1" | grep -c ''; else echo 0; fi; }

start=$(date +%s)
"$bin" sweep "$@" --out "$tmp/full.csv" -q || fail "the uninterrupted sweep failed"
total=$(nrows "$tmp/full.csv")
ncols=$(head -n 1 "$tmp/full.csv" | awk -F, '{ print NF }')
[ "$total" -ge 20 ] || fail "the uninterrupted sweep has only $total rows"
norm "$tmp/full.csv" >"$tmp/full.norm"
head -n 1 "$tmp/full.csv" >"$tmp/full.head"
echo "sweep_interrupt: uninterrupted sweep: $total rows in $(( $(date +%s) - start ))s"

for jobs in 1 2; do
for sig in INT TERM KILL; do
    cut=$tmp/cut-$sig-$jobs.csv
    "$bin" sweep "$@" --jobs $jobs --out "$cut" -q 2>"$tmp/err" &
    pid=$!
    # Let a few rows land, then interrupt.
    waited=0
    while [ "$(nrows "$cut")" -lt 6 ] && kill -0 $pid 2>/dev/null && [ $waited -lt 600 ]; do
        sleep 0.05
        waited=$((waited + 1))
    done
    kill -s $sig $pid 2>/dev/null || fail "$sig/$jobs: the sweep ended before it could be interrupted"
    wait $pid
    st=$?
    case $sig in
    INT) [ $st -eq 130 ] || fail "$sig/$jobs: exit status $st, wanted 130 (128 + SIGINT)" ;;
    TERM) [ $st -eq 143 ] || fail "$sig/$jobs: exit status $st, wanted 143 (128 + SIGTERM)" ;;
    KILL) [ $st -eq 137 ] || fail "$sig/$jobs: exit status $st, wanted 137" ;;
    esac
    [ "$sig" = KILL ] && sleep 0.3 # orphaned workers die at their next write
    have=$(nrows "$cut")
    [ "$have" -lt "$total" ] || fail "$sig/$jobs: the sweep finished before the signal ($have rows)"

    # Every complete line is whole and one of the uninterrupted sweep's rows.
    head -n 1 "$cut" | cmp -s - "$tmp/full.head" || fail "$sig/$jobs: the header differs"
    if [ -s "$cut" ] && [ "$(tail -c 1 "$cut" | od -An -c | tr -d ' ')" != '\n' ]; then
        [ "$sig" = KILL ] || fail "$sig/$jobs: the CSV ends in a torn line after SIG$sig"
        torn=1
    else
        torn=0
    fi
    whole=$(tail -n +2 "$cut" | head -n $((have - torn)))
    nbad=$(printf '%s\n' "$whole" | awk -F, -v n="$ncols" 'NF != n' | grep -c '')
    [ "$nbad" -eq 0 ] || fail "$sig/$jobs: $nbad rows without $ncols fields"
    printf '%s\n' "$whole" | awk -F, -v OFS=, -v n="$ncols" '{ NF = n - 1; print }' | sort >"$tmp/cut.norm"
    nnew=$(comm -23 "$tmp/cut.norm" "$tmp/full.norm" | grep -c '')
    [ "$nnew" -eq 0 ] || fail "$sig/$jobs: $nnew rows on disk differ from the uninterrupted sweep"
    kept=$((have - torn))
    head -n $((kept + 1)) "$cut" >"$tmp/kept.csv"

    # --resume: the kept rows stay byte for byte; only the missing runs run.
    "$bin" sweep "$@" --jobs $jobs --resume --out "$cut" 2>"$tmp/err" ||
        { cat "$tmp/err" >&2; fail "$sig/$jobs: --resume failed"; }
    head -n $((kept + 1)) "$cut" | cmp -s - "$tmp/kept.csv" ||
        fail "$sig/$jobs: --resume changed the rows already on disk"
    grep -q "$((total - kept)) rows written to .* ($kept already there" "$tmp/err" ||
        { cat "$tmp/err" >&2; fail "$sig/$jobs: --resume did not run exactly the $((total - kept)) missing runs"; }
    norm "$cut" | cmp -s - "$tmp/full.norm" ||
        fail "$sig/$jobs: the resumed CSV differs from the uninterrupted one"
    echo "sweep_interrupt: SIG$sig, --jobs $jobs: $kept whole rows kept$([ $torn = 1 ] && echo ', a torn line cut'), --resume ran $((total - kept)), final CSV = uninterrupted"
done
done

# In the middle of a long case (a simulation of 400k ops, half a minute), one job: SIGINT
# and SIGTERM stop the sweep at once, and the simulation with it.
if [ "$1 $2" = "--backend sim" ]; then
    for sig_want in INT:130 TERM:143; do
        sig=${sig_want%:*} want=${sig_want#*:}
        long=$tmp/long-$sig.csv
        "$bin" sweep --backend sim --topology torus_2d_4x4 --algo 2stage --size 1M --channels 128 \
            --out "$long" -q 2>/dev/null &
        pid=$!
        sleep 1
        t0=$(date +%s%N)
        kill -s $sig $pid 2>/dev/null || fail "long case: the sweep ended within a second"
        wait $pid
        st=$?
        ms=$((($(date +%s%N) - t0) / 1000000))
        [ $st -eq "$want" ] || fail "long case, SIG$sig: exit status $st, wanted $want"
        [ $ms -lt 2000 ] || fail "long case, SIG$sig: the sweep took $ms ms to stop"
        sleep 0.2
        ! pgrep -f -- "$long" >/dev/null || fail "long case, SIG$sig: a process of the sweep runs on"
        echo "sweep_interrupt: SIG$sig in a long case: stopped in $ms ms, nothing left running"
    done
fi
echo "sweep_interrupt: ok in $(( $(date +%s) - start ))s"
