#!/usr/bin/env python3
"""Draw the scaling figure (docs/figures/scaling.png): wall time and peak memory of a
simulated allreduce against the number of devices, per backend and algorithm, beside a bare
SimGrid program of torus2d's pattern, from bench/simbench's CSV (`make bench` writes it).

    python3 plots/scaling.py bench/scaling.csv [-o docs/figures/scaling.png]
"""
import argparse
import csv
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("scaling.py: needs matplotlib (Debian: python3-matplotlib)")

STYLE = {  # (backend, algo): colour, marker, line
    ("sim", "torus2d"): ("tab:blue", "o", "-"),
    ("sim", "ring"): ("tab:orange", "s", "-"),
    ("analytic", "torus2d"): ("tab:blue", "o", "--"),
    ("analytic", "ring"): ("tab:orange", "s", "--"),
    ("sim+symmetry", "torus2d"): ("tab:green", "o", "-"),
    ("sim+symmetry", "ring"): ("tab:red", "s", "-"),
    ("analytic+symmetry", "torus2d"): ("tab:green", "o", "--"),
    ("analytic+symmetry", "ring"): ("tab:red", "s", "--"),
    ("bare-simgrid", "torus2d"): ("black", "x", ":"),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("-o", "--out", default="docs/figures/scaling.png")
    a = ap.parse_args()
    series = {}
    with open(a.csv, newline="") as f:
        for r in csv.DictReader(f):
            series.setdefault((r["backend"], r["algo"]), []).append(
                (int(r["devices"]), float(r["wall_s"]), float(r["peak_mb"])))
    if not series:
        sys.exit("scaling.py: %s holds no rows" % a.csv)
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(11, 4.2))
    for key in sorted(series, key=lambda k: list(STYLE).index(k) if k in STYLE else 99):
        pts = sorted(series[key])
        colour, marker, line = STYLE.get(key, ("grey", ".", "-"))
        label = ("bare SimGrid, torus2d pattern" if key[0] == "bare-simgrid"
                 else "%s, %s (rank 0 for all)" % (key[0].split("+")[0], key[1]) if "+symmetry" in key[0]
                 else "%s, %s" % key)
        for ax, col in ((ax_t, 1), (ax_m, 2)):
            ax.plot([p[0] for p in pts], [p[col] for p in pts], line, color=colour, marker=marker, label=label)
    for ax, what in ((ax_t, "wall time (s)"), (ax_m, "peak memory (MB)")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("devices (one rank each)")
        ax.set_ylabel(what)
        ax.grid(True, which="both", alpha=0.3)
    ax_t.set_title("1 MiB bf16 per rank, 1 channel, 1 chunk")
    ax_m.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print("scaling.py: wrote %s" % a.out)


if __name__ == "__main__":
    main()
