#!/bin/sh
# Careless flags are refused in one line with exit 2, never accepted silently: one row
# per case, "expected exit | message fragment | arguments". Run by `make check`.
set -u
. "${srcdir:-.}/tests/lib.sh"
arsim_test flags
printf 'name: "bad\\nname"\nbuilder:\n  ring_1d: {n: 4}\n' >"$tmp/newline.yaml"
printf 'clock_ghz: 1\nlat: 1\n' >"$tmp/model.yaml"
srcdir=${srcdir:-.}
sed 's/^clock_ghz: .*/clock_ghz: 1e-300/' "$srcdir/model/accel_tcm.yaml" >"$tmp/clock.yaml"
sed 's/^\(    capacity_bytes: \).*/\11e30/' "$srcdir/model/accel_tcm.yaml" >"$tmp/capacity.yaml"
sed 's/^\(    lat_ns: \).*/\11e300/' "$srcdir/model/accel_tcm.yaml" >"$tmp/lat.yaml"
n=0
bad=0
while IFS='|' read -r want frag args; do
    case "$want" in ''|'#'*) continue ;; esac
    want=$(echo "$want" | tr -d ' ')
    frag=$(echo "$frag" | sed 's/^ *//; s/ *$//')
    args=$(echo "$args" | sed "s#TMP#$tmp#g")
    n=$((n + 1))
    # shellcheck disable=SC2086
    (cd "$tmp" && eval "\"$bin\" $args" >out.txt 2>err.txt)
    rc=$?
    lines=$(wc -l <"$tmp/err.txt")
    if [ "$rc" != "$want" ] || ! grep -qF -- "$frag" "$tmp/err.txt" || [ "$lines" -ne 1 ]; then
        echo "flags: FAIL: arsim $args: exit $rc (want $want), stderr: $(head -3 "$tmp/err.txt")" >&2
        bad=$((bad + 1))
    fi
    [ -e "$tmp/-q" ] && { echo "flags: FAIL: arsim $args created a file named -q" >&2; bad=$((bad + 1)); rm -f "$tmp/-q"; }
done <<'EOF_CASES'
2 | looks like an option      | run --backend analytic --size 8K --csv -q
2 | looks like an option      | run --backend analytic --size 8K --json -q
2 | looks like an option      | sweep --backend analytic --size 8K --out -q
2 | looks like an option      | merge a.csv -o -q
2 | empty file name           | run --backend analytic --size 8K --csv ''
2 | is not a number           | run --backend analytic --size ' 8K'
2 | trailing characters 'B'   | run --backend analytic --size 1KB
2 | a chunk is 16 bytes to 1G | run --backend analytic --size 8K --chunk 1
2 | a chunk is 16 bytes to 1G | run --backend analytic --size 8K --chunk 1T
2 | given twice               | run --backend analytic --size 8K --dtype bf16,fp32,bf16
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
2 | source addresses          | run --backend analytic --size 8K --topology full:8 --ranks 65536 --algo 2stage
EOF_CASES
# Planning is bounded at any rank count: these end (0 or 2) within 5 s.
for args in "--ranks 4096 --algo center_root" "--ranks 65536 --algo center_root --topology torus_2d:8x8" \
    "--ranks 65536 --algo 1stage --topology switch:8" "--size 1G --chunk 16 --algo ring"; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    timeout 5 "$bin" run --backend analytic --size 8K $args -q >/dev/null 2>&1
    rc=$?
    if [ $rc != 0 ] && [ $rc != 2 ]; then
        echo "flags: FAIL: arsim run --backend analytic --size 8K $args: exit $rc (within 5 s: 0 or 2)" >&2
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
[ $bad = 0 ] || exit 1
echo "flags: $n careless or huge command lines refused in one line with exit 2, or planned within 5 s"
