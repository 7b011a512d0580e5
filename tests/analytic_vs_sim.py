#!/usr/bin/env python3
"""The analytic backend stays the fast estimate of sim: over the shipped topologies x every
algorithm x channels 1, 2, 8, 32 x 1 MB and 64 MB per rank, its time is within 10% of
sim's at the median and 25% at the most.

Rows whose traffic is routed through other devices (1stage and 2stage on rings, tori and
meshes; torus2d and mesh2d on a ring; torus2d's wrap-around on a mesh) are reported apart,
as that is where the two part most: an op held at one busy link leaves part of its share
of another unused, which SimGrid's max-min sharing hands on and the analytic backend does
not (docs/REFERENCE.md). Skipped (77) without the sim backend. Run by `make check`."""
import csv
import io
import os
import statistics
import subprocess
import sys

BIN = os.environ.get("ARSIM", "./arsim")
TOPOS = "ring_1d_6,ring_1d_8,torus_2d_2x3,torus_2d_3x2,torus_2d_4x4,mesh_2d_2x3,hgx_h100_8,h200_pair"
# The algorithms whose plans reach non-neighbours on each kind of shipped topology (every
# pair of hgx_h100_8 and h200_pair is linked).
ROUTED = {"ring_1d": {"1stage", "2stage", "torus2d", "mesh2d"}, "torus_2d": {"1stage", "2stage"},
          "mesh_2d": {"1stage", "2stage", "torus2d"}}


def routed(topology, algo):
    kind = "_".join(topology.split("_")[:2])
    return algo in ROUTED.get(kind, ())


def rows(backend):
    p = subprocess.run([BIN, "sweep", "--backend", backend, "--topology", TOPOS, "--algo", "all", "--channels",
                        "1,2,8,32", "--size", "1M,64M", "--jobs", "2", "-q", "--out", "-"],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit("analytic_vs_sim: FAIL: the %s sweep exited %d: %s" % (backend, p.returncode, p.stderr[-300:]))
    return {(r["topology"], r["algo"], r["channels"], r["bytes"]): float(r["time_us"])
            for r in csv.DictReader(io.StringIO(p.stdout))}


def main():
    have = subprocess.run([BIN, "list", "backends"], capture_output=True, text=True).stdout
    if not any(l.split()[:2] == ["sim", "yes"] for l in have.splitlines()):
        print("analytic_vs_sim: skipped (no sim backend)")
        return 77
    a, s = rows("analytic"), rows("sim")
    keys = sorted(set(a) & set(s))
    if len(keys) < 440:
        print("analytic_vs_sim: FAIL: %d rows in common, want the whole grid (448)" % len(keys))
        return 1
    err = {k: (a[k] - s[k]) / s[k] for k in keys}
    ok = True
    for label, part, med_limit, max_limit in (("direct", [k for k in keys if not routed(k[0], k[1])], 0.10, 0.25),
                                              ("routed", [k for k in keys if routed(k[0], k[1])], 0.10, 0.25),
                                              ("all", keys, 0.10, 0.25)):
        med = statistics.median(abs(err[k]) for k in part)
        worst = max(part, key=lambda k: abs(err[k]))
        print("analytic_vs_sim: %s: %d rows, |analytic - sim| / sim median %.2f%%, max %.2f%% (%s)" %
              (label, len(part), 100 * med, 100 * abs(err[worst]), " ".join(worst)))
        if med > med_limit or abs(err[worst]) > max_limit:
            for k in sorted(part, key=lambda k: -abs(err[k]))[:8]:
                print("analytic_vs_sim:   %+.1f%% %s" % (100 * err[k], " ".join(k)))
            print("analytic_vs_sim: FAIL: %s rows: want median <= %d%%, max <= %d%%" %
                  (label, 100 * med_limit, 100 * max_limit))
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
