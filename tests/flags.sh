#!/bin/sh
# Careless flags are refused in one line with exit 2, never accepted silently: one row
# per case, "expected exit | message fragment | arguments". Every flag that a command's
# --help lists has a row with a bad value (or a value given to a flag that takes none);
# a flag added without one fails this test. Run by `make check`.
set -u
. "${srcdir:-.}/tests/lib.sh"
arsim_test flags
printf 'name: "bad\\nname"\nbuilder:\n  ring_1d: {n: 4}\n' >"$tmp/newline.yaml"
printf 'clock_ghz: 1\nlat: 1\n' >"$tmp/model.yaml"
srcdir=${srcdir:-.}
"$bin" run --backend analytic --topology ring_1d:2 --algo ring --size 8K:16K -q --csv "$tmp/rows.csv" >/dev/null
sed 's/^clock_ghz: .*/clock_ghz: 1e-300/' "$srcdir/model/accel_tcm.yaml" >"$tmp/clock.yaml"
sed 's/^\(    capacity_bytes: \).*/\11e30/' "$srcdir/model/accel_tcm.yaml" >"$tmp/capacity.yaml"
sed 's/^\(    lat_ns: \).*/\11e300/' "$srcdir/model/accel_tcm.yaml" >"$tmp/lat.yaml"
n=0
bad=0
# one case: expected exit, message fragment, arguments
case1() {
    n=$((n + 1))
    # shellcheck disable=SC2086
    (cd "$tmp" && eval "\"$bin\" $3" >out.txt 2>err.txt)
    rc=$?
    lines=$(grep -cv '^arsim sweep: [0-9]* rows written to' "$tmp/err.txt") # a sweep's summary aside
    if [ "$rc" != "$1" ] || ! grep -qF -- "$2" "$tmp/err.txt" || [ "$lines" -ne 1 ]; then
        echo "flags: FAIL: arsim $3: exit $rc (want $1), stderr: $(head -3 "$tmp/err.txt")" >&2
        bad=$((bad + 1))
    fi
    [ -e "$tmp/-q" ] && { echo "flags: FAIL: arsim $3 created a file named -q" >&2; bad=$((bad + 1)); rm -f "$tmp/-q"; }
}
# "S" rows are the shared options: each runs as run, as sweep and as the default study.
while IFS='|' read -r want frag args; do
    case "$want" in ''|'#'*) continue ;; esac
    want=$(echo "$want" | tr -d ' ')
    frag=$(echo "$frag" | sed 's/^ *//; s/ *$//')
    args=$(echo "$args" | sed "s#TMP#$tmp#g; s/^ *//")
    if [ "$want" = S ]; then
        case "$args" in sweep*) case1 2 "$frag" "$args --backend analytic --out s.csv"; continue ;; esac
        case "$args" in --backend*) be= ;; *) be="--backend analytic" ;; esac
        case1 2 "$frag" "run $be $args"
        case1 2 "$frag" "sweep $be --out s.csv $args"
        case1 2 "$frag" "$be $args"
    else
        case1 "$want" "$frag" "$args"
    fi
done <<'EOF_CASES'
2 | vector clocks (--no-verify runs it unverified) | run --backend analytic --topology full:64 --algo 1stage --size 64K --chunk 64 --verify -q
2 | looks like an option      | run --backend analytic --size 8K --csv -q
2 | looks like an option      | run --backend analytic --size 8K --json -q
2 | looks like an option      | sweep --backend analytic --size 8K --out -q
2 | looks like an option      | merge a.csv -o -q
2 | empty file name           | run --backend analytic --size 8K --csv ''
2 | needs --backend cuda (the GPUs' clocks) or sim | run --backend analytic --size 8K --timeline t.csv
2 | looks like an option      | run --backend sim --size 8K --timeline -q
2 | same file as --csv        | run --backend sim --size 8K --timeline t.csv --csv t.csv
2 | cannot write in its directory | run --backend sim --size 8K --timeline no/such/dir/t.csv
2 | is not a number           | run --backend analytic --size ' 8K'
2 | trailing characters 'B'   | run --backend analytic --size 1KB
2 | a chunk is 16 bytes to 1G | run --backend analytic --size 8K --chunk 1
2 | a chunk is 16 bytes to 1G | run --backend analytic --size 8K --chunk 1T
2 | given twice               | run --backend analytic --size 8K --dtype bf16,fp32,bf16
2 | expected allreduce        | run --backend analytic --size 8K --op gather
2 | expected allreduce        | sweep --backend analytic --size 8K --op all-reduce --out x.csv
2 | computes no allgather     | run --backend analytic --size 8K --op allgather --algo 2stage
2 | need --op matmul-allreduce | run --backend analytic --m 512
2 | need --op matmul-allreduce | sweep --backend analytic --partitions 2 --out x.csv
2 | not --size or --count     | run --backend analytic --op matmul-allreduce --size 8K
2 | unknown suffix            | run --backend analytic --op matmul-allreduce --m 12x
2 | must be greater than 0    | sweep --backend analytic --op matmul-allreduce --m 0 --out x.csv
2 | expected a number from 1  | run --backend analytic --op matmul-allreduce --n 0
2 | expected a number from 1  | sweep --backend analytic --op matmul-allreduce --n -3 --out x.csv
2 | expected a number from 1  | run --backend analytic --op matmul-allreduce --k 5000000000
2 | expected a number from 1  | sweep --backend analytic --op matmul-allreduce --k x --out x.csv
2 | expected a number from 1  | run --backend analytic --op matmul-allreduce --partitions 0
2 | does not divide           | sweep --backend analytic --op matmul-allreduce --m 12 --partitions 8 --out x.csv
2 | rows whole, as they arrive | run --backend analytic --op allgather-matmul --partitions 2
2 | computes no allgather-matmul | run --backend analytic --op allgather-matmul --algo 2stage --m 64
2 | computes no allreduce     | sweep --backend analytic --size 8K --algo direct --out x.csv
2 | given twice               | run --backend analytic --size 8K --buffer hbm,hbm
2 | number of channels        | run --backend analytic --size 8K --channels ' 4'
2 | number of channels        | run --backend analytic --size 8K --channels 4x
2 | same file                 | run --backend analytic --size 8K --csv x.csv --json ./x.csv
2 | same file                 | sweep --backend analytic --size 8K --out y.csv --json y.csv
2 | without spaces, commas    | topo check TMP/newline.yaml
2 | unknown key               | run --backend analytic --size 8K --model TMP/model.yaml
2 | out of range              | run --backend analytic --size 8K --model TMP/clock.yaml
2 | out of range              | run --backend analytic --size 8K --model TMP/capacity.yaml
2 | 1e+300 ns is out of range  | run --backend analytic --size 8K --model TMP/lat.yaml
2 | ranks that work: 6, 12, 18 | run --backend analytic --size 8K --topology ring_1d_6 --ranks 4
2 | source addresses          | run --backend analytic --size 8K --ranks 4096 --algo ring
2 | source addresses          | run --backend analytic --size 8K --ranks 65536 --algo ring
2 | source addresses          | run --backend analytic --size 8K --ranks 65536 --algo naive
2 | hbm of d0: needs 2.27 TB (input, output and scratch of 8192 ranks) | run --backend analytic --size 4M --topology full:8 --ranks 65536 --algo 2stage
2 | needs more than 33554432 source addresses, a plan's most: fewer ranks or --channels | run --backend analytic --topology switch:512 --algo 2stage --size 64M --channels 2 --chunk 64K --symmetry off
# every flag of every command, one bad value each
S | 'bogus': unknown algorithm | --size 8K --algo bogus
S | unknown backend           | --backend nope --size 8K
S | '--breakdown' takes no value | --size 8K --breakdown=1
S | unknown memory level      | --size 8K --buffer l3
S | from 1 to 1024            | --size 8K --channels 0
S | takes at most 128 channels | --size 8K --algo ring --channels 1000
S | moves real data           | --size 8K --check
S | a chunk is 16 bytes to 1G | --size 8K --chunk 3
S | at least 1 element        | --count 0
S | --size and --count both   | --size 8K --count 100
2 | empty file name           | run --backend analytic --size 8K --csv ''
S | unknown element type      | --size 8K --dtype int8
S | '--dump-plan' takes no value | --size 8K --dump-plan=x
S | from 1 to 1000000         | --size 8K --iters 0
2 | looks like an option      | run --backend analytic --size 8K --json -q
S | unknown model 'nosuch'    | --size 8K --model nosuch
S | no model key 'foo'        | --size 8K --set foo=1
S | 2 flag is out of range    | --size 8K --set switch_reduce=2
S | want KEY=VALUE            | --size 8K --set switch_reduce
S | has no memory level 'l3'  | --size 8K --set memory.l3.read_gbps=1
S | has no link kind 'nope'   | --size 8K --set links.nope.bw_gbps=1
S | a finite number >= 0      | --size 8K --set memory.hbm.read_gbps=x
S | '--no-verify' takes no value | --size 8K --no-verify=1
S | '--quiet' takes no value  | --size 8K --quiet=1
S | unknown option '-x'       | --size 8K -qx
S | ranks that work: 4, 8, 12 | --size 8K --ranks 6 --topology ring_1d:4
S | root 9 out of range       | --size 8K --root 9 --algo center_root --topology ring_1d:4
S | no algorithm asked has a root | --size 8K --root 1 --algo ring
S | rank 1 given twice        | --size 8K --root 1,1 --algo center_root
S | expected rank numbers     | --size 8K --root x --algo center_root
S | non-negative integer      | --size 8K --seed x
S | must be greater than 0    | --size 0
S | not a whole number of bf16 elements | --size 1001
S | not a whole number of fp32 elements | --size 1002 --dtype bf16,fp32
S | seconds from 0.001        | --size 8K --timeout 0
S | expected at least 1M      | --size 8K --max-mem 1000
S | --max-mem 'x'             | --size 8K --max-mem x
S | expected auto, on or off  | --size 8K --symmetry sometimes
S | unknown 'nosuch'          | --size 8K --topology nosuch
S | '--verify' takes no value | --size 8K --verify=1
S | from 0 to 1000000         | --size 8K --warmup -1
2 | --csv does not apply to arsim sweep | sweep --backend analytic --size 8K --out a.csv --csv b.csv
2 | --breakdown does not apply | sweep --backend analytic --size 8K --out a.csv --breakdown
2 | --dump-plan does not apply | sweep --backend analytic --size 8K --out a.csv --dump-plan
2 | empty file name           | sweep --backend analytic --size 8K --out ''
2 | from 1 to 1024            | sweep --backend analytic --size 8K --out a.csv --jobs 0
2 | want I/N                  | sweep --backend analytic --size 8K --out a.csv --shard 3/2
S | '--resume' takes no value | sweep --backend analytic --size 8K --out a.csv --resume=1
2 | empty file name           | sweep --backend analytic --size 8K --out a.csv --json ''
2 | -o FILE.csv is required   | merge
2 | empty file name           | merge a.csv -o ''
2 | from 1 to 1000            | bench --repeats 0
2 | need --op matmul-allreduce | bench --m 512
2 | unknown suffix            | bench --op matmul-allreduce --m 1x
2 | expected a number from 1  | bench --op matmul-allreduce --n 0
2 | expected a number from 1  | bench --op matmul-allreduce --k -1
2 | expected a number from 1  | bench --op matmul-allreduce --partitions 0
2 | '--no-nccl' takes no value | bench --no-nccl=1
2 | '--force-host' takes no value | bench --force-host=1
2 | from 1 to 1000000         | bench --iters x
2 | empty file name           | bench --csv ''
2 | expected allreduce        | bench --op sum
2 | unknown element type      | bench --dtype int8
2 | from 1 to 1024            | bench --channels 0
2 | a chunk is 16 bytes to 1G | bench --chunk 8
2 | at least 1 element        | bench --count 0
2 | must be greater than 0    | bench --size 0
2 | ranks                     | bench --ranks 0
2 | unknown model             | bench --topology full:2 --model nosuch
2 | seconds from 0.001        | bench --timeout 0
2 | over --max-mem 1 MiB      | run --backend analytic --size 8K --algo ring --max-mem 1M
2 | '--check' takes no value  | bench --check=1
2 | '--quiet' takes no value  | bench --quiet=1
2 | bench measures real GPUs  | bench --backend analytic
2 | --json does not apply to arsim bench | bench --json x.json
2 | needs a value           | bench --algo
2 | needs a value           | bench --topology
2 | one GPU index or two distinct ones | calibrate -o m.yaml --gpus 0,0
2 | one GPU index or two distinct ones | calibrate -o m.yaml --gpus 0,1,2
2 | unknown model 'nosuch'    | calibrate -o m.yaml --gpus 0 --base nosuch
2 | --base is for one         | calibrate -o m.yaml --gpus 0,1 --base h100_sxm
2 | a multiple of 32          | calibrate -o m.yaml --threads 7
2 | expected 1, 2, 3, 4, 6 or 8 | calibrate -o m.yaml --unroll 0
2 | expected 1..1000          | calibrate -o m.yaml --reps 0
2 | expected split, read, write or mean | calibrate -o m.yaml --link-from both
2 | a model name is           | calibrate -o m.yaml --name ''
2 | a model name is           | calibrate -o m.yaml --name 'a,b'
2 | '--launch-wide' takes no value | calibrate -o m.yaml --launch-wide=1
2 | empty file name           | calibrate -o m.yaml --raw ''
2 | empty file name           | calibrate --out ''
2 | empty file name           | calibrate -o ''
2 | calibration runs micro-benchmarks on the cuda backend | calibrate -o m.yaml --backend sim
2 | unknown 'nosuch'          | calibrate -o m.yaml --topology nosuch
2 | '--quiet' takes no value  | calibrate -o m.yaml --quiet=1
2 | --size does not apply to arsim calibrate | calibrate -o m.yaml --size 8K
2 | '--refs' takes no value   | validate --refs=1
2 | cannot open directory     | validate --refs-dir /nonexistent
2 | '--measure-only' takes no value | validate --measure-only=1
2 | cannot open               | validate --measured /nonexistent.csv
2 | empty file name           | validate --measure-only --out ''
2 | empty file name           | validate --measure-only -o ''
2 | empty file name           | validate --refs --summary ''
2 | ranks per device          | validate --placements 0
2 | expected seconds          | validate --time-limit -1
2 | a backend that predicts   | validate --predict-with cuda
2 | '--allow-partial' takes no value | validate --allow-partial=1
2 | are for measuring         | validate --refs --topology nosuch
2 | unknown model             | validate --refs --model nosuch
2 | unknown algorithm         | validate --algo bogus
2 | must be greater than 0    | validate --size 0
2 | at least 1 element        | validate --count 0
2 | unknown element type      | validate --dtype int8
2 | from 1 to 1024            | validate --channels 0
2 | from 1 to 1000000         | validate --iters 0
2 | '--check' takes no value  | validate --check=1
2 | seconds from 0.001        | validate --timeout 0
2 | '--quiet' takes no value  | validate --quiet=1
2 | --buffer does not apply to arsim validate | validate --buffer hbm
2 | unknown option '-x'       | validate -qx
2 | unknown option '-x'       | bench -qx
2 | unknown option '-x'       | calibrate -o m.yaml -qx
2 | unknown model 'nosuch'    | topo show ring_1d:4 --model nosuch
2 | ranks that work: 4, 8, 12 | topo show ring_1d:4 --ranks 3
2 | --check does not apply    | topo show ring_1d:4 --check
2 | give one model            | model show accel_tcm --markdown=1
2 | unexpected argument       | model keys --markdown=1
2 | unknown list              | list bogus
2 | not a directory           | --data-dir /nonexistent run
2 | unknown 'nosuch'          | bound --topology nosuch
2 | unknown model             | bound --model nosuch
2 | no model key 'foo'        | bound --set foo=1
2 | must be greater than 0    | bound --size 0
2 | at least 1 element        | bound --count 0
2 | unknown element type      | bound --dtype int8
2 | unknown memory level      | bound --buffer l3
2 | ranks that work: 4, 8, 12 | bound --topology ring_1d:4 --ranks 6
2 | unknown option '-x'       | bound -qx
2 | '--quiet' takes no value  | bound --quiet=1
2 | --algo does not apply to arsim bound | bound --algo ring
2 | has no tcm level          | bound --topology h200_pair --buffer tcm
2 | empty file name           | plot TMP/rows.csv -o ''
2 | --y 'bogus'               | plot TMP/rows.csv --y bogus
2 | '--title' needs a value   | plot TMP/rows.csv --title
2 | one CSV file at a time    | plot TMP/rows.csv TMP/rows.csv
EOF_CASES
# Planning is bounded at any rank count: these end (0 or 2) within 5 s (times the Check
# timeout multiplier that a sanitizer build sets, since it runs everything slower).
limit=$((5 * ${CK_TIMEOUT_MULTIPLIER:-1}))
for args in "--ranks 4096 --algo center_root" "--ranks 65536 --algo center_root --topology torus_2d:8x8" \
    "--ranks 65536 --algo 1stage --topology switch:8" "--size 1G --chunk 16 --algo ring" \
    "--algo center_root --topology switch:16384"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    timeout "$limit" "$bin" run --backend analytic --size 8K $args -q >/dev/null 2>&1
    rc=$?
    if [ $rc != 0 ] && [ $rc != 2 ]; then
        echo "flags: FAIL: arsim run --backend analytic --size 8K $args: exit $rc (within $limit s: 0 or 2)" >&2
        bad=$((bad + 1))
    fi
done
# A backend that cannot run here at all says so once, not once per case (where no GPU is
# visible: the cuda backend absent from the build, or present without a GPU).
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    n=$((n + 1))
    "$bin" run --backend cuda --topology full:2 --algo all --size 8K:1M >"$tmp/cuda.out" 2>"$tmp/cuda.err"
    rc=$?
    if [ $rc != 2 ] || [ "$(wc -l <"$tmp/cuda.err")" != 1 ] || [ -s "$tmp/cuda.out" ]; then
        echo "flags: FAIL: run --backend cuda without a GPU: exit $rc (want 2), $(wc -l <"$tmp/cuda.err") lines on stderr (want 1), stdout: $(head -c 200 "$tmp/cuda.out")" >&2
        bad=$((bad + 1))
    fi
fi
# Every flag a command's --help names has a case above (the table, this file).
for cmd in run sweep merge bench calibrate validate "topo show" model list plot bound; do
    # shellcheck disable=SC2086
    for flag in $("$bin" $cmd --help 2>/dev/null | grep -oE -- '(^|[][ ,|])--?[a-zA-Z][a-zA-Z-]*' |
        sed 's/^[][ ,|]//' | sort -u); do
        [ "$flag" = --help ] && continue
        n=$((n + 1))
        first=${cmd%% *}
        pat="[|] *$first .*$flag([ =]|x?$)"
        case "$first" in run|sweep) pat="^([S2] [|].*[|] *($first )?.*$flag([ =]|x?$)|S [|].*[|] *$flag([ =]|x?$))" ;; esac
        grep -qE -- "$pat" "$0" || {
            echo "flags: FAIL: arsim $cmd $flag: no case with a bad value in tests/flags.sh" >&2
            bad=$((bad + 1))
        }
    done
done
echo "flags: $n checks"
[ $bad = 0 ] || exit 1
echo "flags: $n careless or huge command lines refused in one line with exit 2, or planned within 5 s"
