#!/bin/sh
# What-if for fused matmul + allreduce: how much overlapping the product with its allreduce
# gains, against the devices and the link speed. For 8 and 64 devices on one switch (the
# h100_sxm model, its NVLink scaled x0.25, x1, x4), M = 2048 and 8192 rows, N = K = 8192, bf16,
# ring: the fused op at the model's defaults (partitions, channels), and the same plan with one
# partition (the product whole, then its allreduce) at the same channels and chunk. A CSV on stdout:
# devices,link_scale,m,partitions,channels,fused_us,one_partition_us,gain,bound_us,efficiency.
# BACKEND (default sim) and ARSIM (default ./arsim) choose the backend and binary.
set -u
bin=${ARSIM:-./arsim}
be=${BACKEND:-sim}
bw=20.328
echo "devices,link_scale,m,partitions,channels,fused_us,one_partition_us,gain,bound_us,efficiency"
for n in 8 64; do
    for scale in 0.25 1 4; do
        set_bw=$(awk -v b=$bw -v s=$scale 'BEGIN { printf "%.4f", b * s }')
        for m in 2048 8192; do
            common="--backend $be --topology switch:$n --model h100_sxm --set links.nvlink4.bw_gbps=$set_bw \
--op matmul-allreduce --m $m --n 8192 --k 8192 --algo ring -q --csv -"
            # shellcheck disable=SC2086
            f=$("$bin" run $common 2>/dev/null | tail -n 1)
            parts=$(echo "$f" | cut -d, -f6 | sed 's|.*/||')
            ch=$(echo "$f" | cut -d, -f14)
            chunk=$(echo "$f" | cut -d, -f15)
            # shellcheck disable=SC2086
            o=$("$bin" run $common --partitions 1 --channels "$ch" --chunk "$chunk" 2>/dev/null | tail -n 1)
            echo "$f" "$o" | awk -v n=$n -v s=$scale -v m=$m -v p="$parts" -v ch="$ch" '
                { split($1, a, ","); split($2, b, ",")
                  printf "%d,%s,%d,%s,%s,%.1f,%.1f,%.3f,%.1f,%.3f\n", n, s, m, p, ch, a[16], b[16], b[16] / a[16], a[20], a[21] }'
        done
    done
done
