#!/usr/bin/env python3
"""Draw docs/figures/architecture.png: arsim's rooms and the path of one case, from the
command line through its plan, a backend and the channel clock to its CSV row.

    python3 plots/architecture.py [-o docs/figures/architecture.png]
"""
import argparse
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
except ImportError:
    sys.exit("architecture.py: needs matplotlib (Debian: python3-matplotlib)")

# room: (x, y, w, h, what it holds)
ROOMS = {
    "cli/": (0.3, 6.2, 3.0, 1.1, "parse options, build cases,\nprint table / CSV / JSON"),
    "runner/": (4.3, 6.2, 3.0, 1.1, "one case: build, verify,\nrun, check -> ar_row_t"),
    "algorithms/": (8.3, 6.2, 3.2, 1.1, "(topology, count, dtype,\noptions) -> plan; probes"),
    "topologies/": (8.3, 4.4, 3.2, 1.1, "graph, routes, builders;\nload.c: files and names"),
    "model/": (8.3, 2.6, 3.2, 1.1, "key table (model_keys.h),\nloader, writer, *.yaml"),
    "backends/": (4.3, 4.4, 3.0, 1.1, "registry (caps, fits),\nref, analytic"),
    "sim/": (1.6, 2.6, 2.6, 1.1, "SimGrid engine: how fast\nbytes stream, shared"),
    "cost/": (5.0, 2.6, 2.6, 1.1, "cost of one op;\nclock.c: the channel clock"),
    "hw/": (0.3, 4.4, 3.0, 1.1, "cuda backend: the plan\nexecutor on the GPUs"),
    "validate/": (0.3, 0.8, 3.4, 1.1, "calibrate, bench beside NCCL,\nmeasure, compare, refs"),
    "common/": (4.3, 0.8, 3.7, 1.1, "plan IR, verify, errors, types,\ncsv.c, check.c, util.c"),
}

# (from, to, label): the path of one `arsim run` case, in order
CASE = [
    ("cli/", "runner/", "1 ar_case_t"),
    ("runner/", "algorithms/", "2 build"),
    ("algorithms/", "topologies/", "routes"),
    ("runner/", "backends/", "3 ar_backend_run"),
    ("backends/", "cost/", "4 clock"),
    ("backends/", "sim/", "4 sim"),
    ("sim/", "cost/", "clock"),
    ("cost/", "model/", "terms"),
    ("runner/", "cli/", "5 row -> sinks"),
]


def centre(r):
    x, y, w, h, _ = ROOMS[r]
    return x + w / 2, y + h / 2


def edge(r, towards):
    """Where the line from room r's centre towards a point leaves the room."""
    x, y, w, h, _ = ROOMS[r]
    cx, cy = centre(r)
    dx, dy = towards[0] - cx, towards[1] - cy
    tx = (w / 2 + 0.08) / abs(dx) if dx else float("inf")
    ty = (h / 2 + 0.08) / abs(dy) if dy else float("inf")
    t = min(tx, ty)
    return cx + dx * t, cy + dy * t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--out", default="docs/figures/architecture.png")
    a = ap.parse_args()
    fig, ax = plt.subplots(figsize=(11.5, 7.6))
    ax.set_xlim(0, 11.8)
    ax.set_ylim(0.4, 7.7)
    ax.axis("off")
    for name, (x, y, w, h, what) in ROOMS.items():
        case = any(name in (f, t) for f, t, _ in CASE)
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.05", fc="#e8f0fb" if case else "#f2f2f2",
                                    ec="#2b5d9b" if case else "#888888", lw=1.4))
        ax.text(x + 0.12, y + h - 0.22, name, fontsize=11, fontweight="bold", va="top")
        ax.text(x + 0.12, y + h - 0.52, what, fontsize=8.5, va="top")
    for f, t, label in CASE:
        back = (f, t) == ("runner/", "cli/")
        cf, ct = centre(f), centre(t)
        if back:  # the row comes back below the case's arrow
            cf, ct = (cf[0], cf[1] - 0.3), (ct[0], ct[1] - 0.3)
        elif (f, t) == ("cli/", "runner/"):
            cf, ct = (cf[0], cf[1] + 0.3), (ct[0], ct[1] + 0.3)
        (x0, y0), (x1, y1) = edge(f, ct), edge(t, cf)
        if back or (f, t) == ("cli/", "runner/"):
            y0, y1 = cf[1], ct[1]
        ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle="-|>", mutation_scale=14, lw=1.3,
                                     color="#c0392b", shrinkA=0, shrinkB=0))
        ax.text((x0 + x1) / 2, (y0 + y1) / 2 + 0.08, label, fontsize=8.5, color="#c0392b", ha="center",
                bbox=dict(fc="white", ec="none", pad=0.5))
    ax.text(0.3, 7.55, "arsim: rooms, and the path of one case (arsim run ... --csv out.csv)", fontsize=12,
            fontweight="bold", va="top")
    ax.text(0.3, 0.55, "Grey rooms serve other commands (validate, calibrate, bench) and every room (common/). "
            "Every room may use the public headers include/arsim/.", fontsize=8.5, va="top")
    fig.savefig(a.out, dpi=110, bbox_inches="tight")
    print(f"architecture.py: wrote {a.out}")


if __name__ == "__main__":
    main()
