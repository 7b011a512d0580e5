#!/bin/sh
# The what-if efficiency table (`make bench` runs it after the simulator's speed): each
# algorithm on the topology it is made for, at its defaults (the model's channels), on the
# analytic and sim backends: its share of the physical bound (arsim bound) and the share
# aimed at. A markdown table on stdout. ARSIM names the binary (default ./arsim).
set -u
bin=${ARSIM:-./arsim}
backends=analytic
"$bin" run --backend sim --topology ring_1d:2 --algo ring --size 8K -q >/dev/null 2>&1 && backends="analytic sim"
echo "| algorithm | topology | model | size | backend | channels | efficiency | aim |"
echo "| --- | --- | --- | ---: | --- | ---: | ---: | ---: |"
while read -r algo topo model sizes aim; do
    for be in $backends; do
        "$bin" run --backend "$be" --topology "$topo" --model "$model" --algo "$algo" --size "$sizes" \
            --csv - -q 2>/dev/null | awk -F, -v aim="$aim" -v topo="$topo" '
            NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
            { printf "| %s | %s | %s | %s | %s | %s | %.1f%% | %s%% |\n", $col["algo"], topo, $col["model"],
                     ($col["bytes"] >= 1073741824 ? $col["bytes"] / 1073741824 "G" : $col["bytes"] / 1048576 "M"),
                     $col["backend"], $col["channels"], 100 * $col["efficiency"], aim }'
    done
done <<'CASES'
ring ring_1d:8 accel_tcm 64M,1G 90
torus2d torus_2d_4x4 accel_tcm 1G 85
2stage full:8 accel_tcm 64M,1G 85
mesh2d mesh_2d:4x4 accel_tcm 64M,1G 70
ring hgx_h100_8 h100_sxm 64M,1G 90
2stage hgx_h100_8 h100_sxm 64M,1G 85
CASES
