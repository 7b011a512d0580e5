#!/bin/sh
# validate never passes silently: measured rows whose algorithm is written as bench labels it
# (ring/8 where channels were given, auto:2stage/128 where auto chose) are matched to their
# algorithm; a row no algorithm can predict fails the comparison (exit 2, its line named)
# unless --allow-partial, which compares the others. Run by `make check` (TESTS).
set -u
. "${srcdir:-.}/tests/lib.sh"
arsim_test validate_rows
meas=${srcdir:-.}/validate/results/measured.csv
model=${srcdir:-.}/validate/results/h200_calibrated.yaml
# validate FILE must be refused: exit 2, PATTERN on stderr (WHAT: the case, for the failure)
refused() {
    "$bin" validate --measured "$1" --model "$model" --predict-with analytic -o "$tmp/refused_out.csv" \
        >/dev/null 2>"$tmp/stderr"
    rc=$?
    [ $rc = 2 ] || fail "$3: exit $rc, want 2"
    grep -q "$2" "$tmp/stderr" || fail "$3 does not say why: $(head -2 "$tmp/stderr")"
}
# the header and comments, then two rows of 1 MB relabelled as bench writes them
{
    grep '^#' "$meas"
    grep -v '^#' "$meas" | head -1
    grep '^cuda,h200_pair,h200_sxm,2,ring,bf16,hbm,1048576,' "$meas" | sed 's/,ring,/,ring\/64,/'
    grep '^cuda,h200_pair,h200_sxm,2,2stage,bf16,hbm,1048576,' "$meas" | sed 's/,2stage,/,auto:2stage\/64,/'
} >"$tmp/labels.csv"
[ "$(grep -vc '^#' "$tmp/labels.csv")" = 3 ] || fail "the committed measurement lacks the rows this test takes"
"$bin" validate --measured "$tmp/labels.csv" --model "$model" --predict-with analytic -o "$tmp/out.csv" \
    >"$tmp/stdout" 2>"$tmp/stderr" || { cat "$tmp/stderr" >&2; fail "bench's labels were not matched"; }
grep -q "rows compared: 2 of 2" "$tmp/stdout" || fail "not every relabelled row was compared: $(cat "$tmp/stdout")"
# the worst rows, most missed first, each with its predicted time split by term (the terms sum to it)
grep -q "^## The 2 worst rows, and the predicted time by term (us)" "$tmp/stdout" ||
    fail "no worst rows in the summary: $(cat "$tmp/stdout")"
awk -F'|' '/^\| [0-9]+ \| / { n++; e = $6 < 0 ? -$6 : $6; if (n > 1 && e > last + 1e-9) bad = "not in order of |error|"
                               s = 0; for (i = 7; i <= 12; i++) s += $i
                               if (s - $5 > 0.05 || $5 - s > 0.05) bad = "terms sum to " s ", predicted " $5
                               last = e }
     END { if (n != 2) bad = n " rows"; if (bad != "") { print bad; exit 1 } }' "$tmp/stdout" >"$tmp/worst" ||
    fail "the worst rows: $(cat "$tmp/worst")"
# a row of an algorithm that does not exist: exit 2 naming its line, nothing written
sed 's/,ring\/64,/,nosuch\/8,/' "$tmp/labels.csv" >"$tmp/bad.csv"
line=$(grep -n 'nosuch' "$tmp/bad.csv" | cut -d: -f1)
"$bin" validate --measured "$tmp/bad.csv" --model "$model" --predict-with analytic -o "$tmp/bad_out.csv" \
    >/dev/null 2>"$tmp/stderr"
rc=$?
[ $rc = 2 ] || fail "a row that cannot be compared: exit $rc, want 2"
grep -q "1 of 2 measured rows could not be compared (line $line;" "$tmp/stderr" ||
    fail "the error does not name line $line: $(tail -1 "$tmp/stderr")"
[ ! -e "$tmp/bad_out.csv" ] || fail "a failed comparison left its CSV"
"$bin" validate --measured "$tmp/bad.csv" --model "$model" --predict-with analytic -o "$tmp/part.csv" \
    --allow-partial >"$tmp/stdout" 2>/dev/null || fail "--allow-partial did not accept the others"
grep -q "rows compared: 1 of 2" "$tmp/stdout" || fail "--allow-partial: $(cat "$tmp/stdout")"
# a row measured on plans cut otherwise: its channels' plan with a largest piece within 2% of its
# own stands in, and the summary says so; a piece no plan of this build has is refused by line
awk -F, -v OFS=, '/^#|^backend,/ { print; next } /,ring\/64,/ { $11 = p; print }' p=8100 "$tmp/labels.csv" >"$tmp/near.csv"
"$bin" validate --measured "$tmp/near.csv" --model "$model" --predict-with analytic -o "$tmp/near_out.csv" \
    >"$tmp/stdout" 2>"$tmp/stderr" || fail "a row 1% off its plan's piece was not compared: $(tail -1 "$tmp/stderr")"
grep -q "of them 1 measured on plans cut a little differently" "$tmp/stdout" || fail "near row: $(cat "$tmp/stdout")"
awk -F, -v OFS=, '/^#|^backend,/ { print; next } /,ring\/64,/ { $11 = p; print }' p=600000 "$tmp/labels.csv" >"$tmp/far.csv"
far=$(grep -n ',600000,' "$tmp/far.csv" | cut -d: -f1)
refused "$tmp/far.csv" \
    ":$far: ring/64 2 ranks 1048576 B: cannot predict: no plan of this build has the measured 16 channels and largest piece 600000 B" \
    "a row no plan rebuilds"
# a row whose channels and largest piece two plans of different op counts share (center_root at
# 16777259 bf16 elements on 2 ranks, 64 channels: plans of 1038 and 1031 ops, an odd count) is
# predicted on the first the options give, and validate says so, on stderr and in the summary
odd=${srcdir:-.}/validate/results/h200/fresh_2026-12-03T2150_1gpu/measured_1gpu_odd_bf16_p2.csv
{ grep '^#' "$odd"; grep -v '^#' "$odd" | head -1; grep ',center_root,bf16,sum,0,hbm,33554518,' "$odd"; } >"$tmp/amb.csv"
[ "$(grep -vc '^#' "$tmp/amb.csv")" = 2 ] || fail "the committed odd-count measurement lacks its center_root row at 16777259"
"$bin" validate --measured "$tmp/amb.csv" --model h200_sxm --predict-with analytic -o "$tmp/amb_out.csv" \
    >"$tmp/stdout" 2>"$tmp/stderr" || fail "an ambiguous row was not compared: $(tail -1 "$tmp/stderr")"
grep -q "plans of [0-9]* and [0-9]* ops both have the measured 64 channels and largest piece 262144 B" "$tmp/stderr" ||
    fail "the ambiguous row is not named: $(cat "$tmp/stderr")"
grep -q "of them 1 whose channels and largest piece plans of different op counts share" "$tmp/stdout" ||
    fail "the summary does not count the ambiguous row: $(cat "$tmp/stdout")"
# rows that recorded their GPUs' links (links_detected) are predicted only on a topology of as many:
# h200_pair gives its pair 18 NVLink lanes, so NV18 rows compare and NV4 rows are refused, naming why
awk -F, -v OFS=, '/^#/ { print; next } /^backend,/ { print $0 ",links_detected"; next } { print $0 ",NV" n }' n=18 \
    "$tmp/labels.csv" >"$tmp/nv18.csv"
"$bin" validate --measured "$tmp/nv18.csv" --model "$model" --predict-with analytic -o "$tmp/nv18_out.csv" \
    >"$tmp/stdout" 2>"$tmp/stderr" || fail "rows measured on NV18 were not compared on h200_pair: $(tail -1 "$tmp/stderr")"
grep -q "rows compared: 2 of 2" "$tmp/stdout" || fail "NV18 rows: $(cat "$tmp/stdout")"
sed 's/,NV18$/,NV4/' "$tmp/nv18.csv" >"$tmp/nv4.csv"
refused "$tmp/nv4.csv" \
    "measured on GPUs with 4 NVLink links up each (links_detected NV4), but topology h200_pair gives device 0 18 lanes" \
    "rows measured on NV4 predicted on 18 lanes"
echo "validate_rows: bench's labels matched, the worst rows listed with their terms; an unmatched row exits 2 naming line $line;"
echo "validate_rows: --allow-partial compares the rest; a plan cut a little otherwise stands in, noted; one no plan rebuilds exits 2; one two plans share is named;"
echo "validate_rows: rows that recorded NV18 compare on h200_pair, NV4 ones are refused"
