#!/usr/bin/env python3
"""The analytic backend stays the fast estimate of sim: over the shipped topologies x every
algorithm that fits x channels 1, 2, 8, 32 x 1 MB and 64 MB per rank, its time is within
10% of sim's at the median and 25% at the most. Skipped (77) without the sim backend.
Run by `make check`."""
import csv
import io
import os
import statistics
import subprocess
import sys

BIN = os.environ.get("ARSIM", "./arsim")
TOPOS = "ring_1d_6,ring_1d_8,torus_2d_2x3,torus_2d_3x2,torus_2d_4x4,mesh_2d_2x3,hgx_h100_8,h200_pair"


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
    if len(keys) < 300:
        print("analytic_vs_sim: FAIL: %d rows in common, want the whole grid (312)" % len(keys))
        return 1
    err = {k: (a[k] - s[k]) / s[k] for k in keys}
    med = statistics.median(abs(e) for e in err.values())
    worst = max(keys, key=lambda k: abs(err[k]))
    print("analytic_vs_sim: %d rows, |analytic - sim| / sim median %.2f%%, max %.2f%% (%s)" %
          (len(keys), 100 * med, 100 * abs(err[worst]), " ".join(worst)))
    ok = med <= 0.10 and abs(err[worst]) <= 0.25
    if not ok:
        for k in sorted(keys, key=lambda k: -abs(err[k]))[:8]:
            print("analytic_vs_sim:   %+.1f%% %s" % (100 * err[k], " ".join(k)))
        print("analytic_vs_sim: FAIL: want median <= 10%, max <= 25%")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
