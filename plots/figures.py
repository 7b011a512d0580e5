#!/usr/bin/env python3
"""arsim figures: turn arsim's CSV files into the figures of docs/VALIDATION.md.

    python3 plots/figures.py [--data plots/data] [--results validate/results]
                             [--out docs/figures] [--only NAME[,NAME..]]
    python3 plots/figures.py --topology FILE_OR_SPEC [--arsim PATH] -o topo.png

Every input is a CSV written by arsim (sweep/run --csv, validate) or the text of
`arsim topo show`; nothing here simulates. A figure whose data is missing is
skipped with a line saying which file it wanted. Figures: latency vs size per
topology (n_elem and bytes sweeps), buffer-kind sweep, topology diagrams, model
vs measured with the error, model vs reference (broken axes), busbw vs NCCL, busbw beside
PyTorch's symmetric memory.
"""
import argparse
import csv
import glob
import math
import os
import re
import subprocess
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

NELEM = [8, 16, 32, 64, 128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 49152]
LAT_TOPOS = [("ring_1d_6", "ring_1d, 6 devices"), ("torus_2d_2x3", "torus_2d 2x3"),
             ("mesh_2d_2x3", "mesh_2d 2x3 (no wrap-around)")]
ALGO_STYLE = {  # one colour and marker per algorithm, the same in every figure
    "ring": ("#1f77b4", "o"), "torus2d": ("#ff7f0e", "s"), "mesh2d": ("#2ca02c", "^"),
    "1stage": ("#d62728", "v"), "2stage": ("#9467bd", "D"), "center_root": ("#8c564b", "P"),
    "naive": ("#7f7f7f", "x"), "nccl": ("#000000", "*"),
}
# Line styles too: where two algorithms' curves meet, the dashes keep both visible.
ALGO_LS = {"ring": "-", "torus2d": "-", "mesh2d": (0, (4, 3)), "1stage": "-", "2stage": "-",
           "center_root": "-", "naive": (0, (1, 1.5))}
BUF_STYLE = {"tcm": ("#e41a1c", "o"), "sram": ("#377eb8", "s"), "hbm": ("#4daf4a", "^")}
plt.rcParams.update({"figure.dpi": 110, "savefig.dpi": 110, "font.size": 9, "axes.grid": True,
                     "grid.alpha": 0.3, "legend.fontsize": 8})


def note(msg):
    print("figures: " + msg, file=sys.stderr)


def read_csv(path):
    """Rows of an arsim CSV as dicts ('#' lines skipped), or None when absent."""
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        lines = [l for l in f if not l.lstrip().startswith("#") and l.strip()]
    return list(csv.DictReader(lines))


def comments(path):
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for l in f:
                m = re.match(r"#\s*(device|date|measured on|predicted on):\s*(.*)", l)
                if m:
                    out[m.group(1)] = m.group(2).strip()
    return out


def fmt_bytes(b, _pos=None):
    for unit, s in ((1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if b >= unit:
            v = b / unit
            return ("%g" % v) + s
    return "%g" % b


def bytes_axis(ax, xs=None):
    """Log2 x axis in bytes: a tick at every power of two of the data, at most ~8 labelled
    (always the first and the last)."""
    ax.set_xscale("log", base=2)
    if not xs:
        lo, hi = ax.get_xlim()
        xs = [lo, hi]
    e0, e1 = math.ceil(math.log2(min(xs)) - 1e-9), math.floor(math.log2(max(xs)) + 1e-9)
    ticks = [2.0 ** e for e in range(e0, e1 + 1)]
    step = max(1, math.ceil(len(ticks) / 8))
    labelled = {ticks[i] for i in range(0, len(ticks), step)} | {ticks[-1]}
    if len(ticks) > 1 and step > 1 and (len(ticks) - 1) % step and (len(ticks) - 1) % step < step / 2:
        labelled.discard(ticks[(len(ticks) - 1) // step * step])  # keep the last label clear
    ax.set_xticks(ticks)
    ax.set_xticklabels([fmt_bytes(t) if t in labelled else "" for t in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())


def log_y(ax):
    """Log y axis with plain numbers (1, 2, 5, 10, 20 ...) instead of 2x10^1."""
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, p: "%g" % v))
    ax.yaxis.set_minor_formatter(FuncFormatter(
        lambda v, p: ("%g" % v) if ("%.0e" % v)[0] in "25" and v < 1e5 else ""))


def algo_order(names):
    order = list(ALGO_STYLE)
    return sorted(names, key=lambda a: order.index(a) if a in order else 99)


def style(a):
    return ALGO_STYLE.get(a, ("#17becf", "."))


FAILED = []  # figures that had nothing to draw: main's exit status


def has_data(fig):
    """Whether any axes of fig holds a line, bar or marker with points."""
    for ax in fig.axes:
        if any(len(l.get_xdata()) for l in ax.lines) or ax.patches or \
                any(len(c.get_offsets()) for c in ax.collections if hasattr(c, "get_offsets")):
            return True
    return False


def save(fig, out, name):
    path = os.path.join(out, name)
    if not has_data(fig):  # a CSV of another kind: no empty figure in its place
        plt.close(fig)
        FAILED.append(name)
        print("figures: %s: nothing to draw from its data; not written" % name, file=sys.stderr)
        return
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)
    print("figures: wrote " + path)


# ------------------------------------------------------------ latency vs size

def series(rows, key, **match):
    """{algo: [(x, time_us)]} for rows matching every field in match."""
    s = defaultdict(list)
    for r in rows:
        if all(r.get(k) == str(v) for k, v in match.items()):
            s[r["algo"]].append((float(r[key]), float(r["time_us"])))
    return {a: sorted(v) for a, v in s.items()}


def fig_latency(data, out):
    nel = read_csv(os.path.join(data, "latency_nelem.csv"))
    byt = read_csv(os.path.join(data, "latency_bytes.csv"))
    if nel is None or byt is None:
        note("latency: needs %s/latency_nelem.csv and latency_bytes.csv (scripts/reproduce.sh)" % data)
        return
    for topo, label in LAT_TOPOS:
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
        model = next((r["model"] for r in nel if r["topology"] == topo), "?")
        dt_n = next((r["dtype"] for r in nel if r["topology"] == topo), "?")
        dt_b = next((r["dtype"] for r in byt if r["topology"] == topo), "?")
        buf = next((r["buffer"] for r in nel if r["topology"] == topo), "?")
        for a, pts in sorted(series(nel, "count", topology=topo).items(), key=lambda kv: algo_order([kv[0]])):
            c, m = style(a)
            a1.plot([p[0] for p in pts], [p[1] for p in pts], marker=m, color=c, label=a, ms=4,
                    ls=ALGO_LS.get(a, "-"), mfc="none")
        a1.set_xscale("log", base=2)
        a1.set_xticks(NELEM)
        a1.set_xticklabels([str(n) for n in NELEM], rotation=60)
        a1.xaxis.set_minor_formatter(NullFormatter())
        log_y(a1)
        a1.set_xlabel("elements per rank (n_elem, %s)" % dt_n)
        a1.set_ylabel("allreduce latency (us)")
        a1.set_title("n_elem 8 .. 49152")
        a1.legend(title="algorithm")
        for a, pts in sorted(series(byt, "bytes", topology=topo).items(), key=lambda kv: algo_order([kv[0]])):
            c, m = style(a)
            a2.plot([p[0] for p in pts], [p[1] for p in pts], marker=m, color=c, label=a, ms=4,
                    ls=ALGO_LS.get(a, "-"), mfc="none")
        bytes_axis(a2, [float(r["bytes"]) for r in byt if r["topology"] == topo])
        log_y(a2)
        a2.set_xlabel("bytes per rank (%s)" % dt_b)
        a2.set_ylabel("allreduce latency (us)")
        a2.set_title("8 KB .. 1 GB")
        a2.legend(title="algorithm")
        fig.suptitle("%s: latency vs size (sim backend, model %s, buffers in %s)" % (label, model, buf))
        fig.tight_layout()
        save(fig, out, "latency_%s.png" % topo)


def fig_buffer_kind(data, out):
    rows = read_csv(os.path.join(data, "buffer_kind.csv"))
    if rows is None:
        note("buffer kind: needs %s/buffer_kind.csv" % data)
        return
    topo = rows[0]["topology"] if rows else "?"
    algos = algo_order({r["algo"] for r in rows})
    ncol = min(3, len(algos))
    nrow = (len(algos) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.4 * nrow), sharey=True, squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[len(algos):]:
        ax.axis("off")
    for ax, a in zip(flat, algos):
        for b in ("tcm", "sram", "hbm"):
            pts = sorted((float(r["count"]), float(r["time_us"])) for r in rows if r["algo"] == a and r["buffer"] == b)
            if pts:
                c, m = BUF_STYLE[b]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=m, color=c, label=b, ms=4)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, p: "%d" % v))
        log_y(ax)
        ax.set_title(a)
        ax.set_xlabel("elements per rank (n_elem, %s)" % rows[0]["dtype"])
        ax.legend(title="buffer kind")
    for row in axes:
        row[0].set_ylabel("allreduce latency (us)")
    fig.suptitle("Buffer kind on %s (model %s, sim backend)" % (topo, rows[0]["model"] if rows else "?"))
    fig.tight_layout()
    save(fig, out, "buffer_kind.png")


# ------------------------------------------------------------ topology diagram

def parse_topo_show(text):
    """Devices, links and the grid from `arsim topo show` output."""
    t = {"name": "?", "kind": "", "w": 0, "h": 0, "devices": [], "switches": [], "links": [], "model": ""}
    for line in text.splitlines():
        m = re.match(r"topology\s+(\S+)\s+\((\w+)(?:,\s*(\d+) wide x (\d+) high)?", line)
        if m:
            t["name"], t["kind"] = m.group(1), m.group(2)
            if m.group(3):
                t["w"], t["h"] = int(m.group(3)), int(m.group(4))
        m = re.match(r"model\s+(\S+)", line)
        if m:
            t["model"] = m.group(1)
        m = re.match(r"devices\s+\d+[^:]*:\s*(.*)", line)
        if m:  # switches are listed after the devices, marked with '*'
            names = m.group(1).split()
            t["devices"] = [n for n in names if not n.endswith("*")]
            t["switches"] = [n[:-1] for n in names if n.endswith("*")]
        m = re.match(r"\s+\d+\s+(\S+)\s+<->\s+(\S+)\s+(\S+)\s+x(\d+)\s+(.*)", line)
        if m:
            t["links"].append((m.group(1), m.group(2), m.group(3), int(m.group(4)), m.group(5)))
    return t


def topo_show(arsim, spec):
    r = subprocess.run([arsim, "topo", "show", spec], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("figures: arsim topo show %s: %s" % (spec, r.stderr.strip()))
    return r.stdout


def draw_topology(t, out_path):
    devs, sws = t["devices"], t["switches"]
    pos = {}
    if t["w"] and t["h"]:
        for i, d in enumerate(devs):
            pos[d] = (i % t["w"], -(i // t["w"]))
    else:
        n = len(devs)
        for i, d in enumerate(devs):
            ang = math.pi / 2 - 2 * math.pi * i / max(n, 1)
            pos[d] = (math.cos(ang), math.sin(ang))
        for j, s in enumerate(sws):
            pos[s] = (0.35 * (j - (len(sws) - 1) / 2), 0)
    fig, ax = plt.subplots(figsize=(5.2, 4.6))
    kinds = sorted({l[2] for l in t["links"]})
    kcol = {k: c for k, c in zip(kinds, ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"])}
    maxc = max([l[3] for l in t["links"]] or [1])
    for a, b, kind, count, info in t["links"]:
        (x1, y1), (x2, y2) = pos[a], pos[b]
        lw = 1 + 3 * count / maxc
        grid_far = t["w"] and (abs(x1 - x2) > 1.01 or abs(y1 - y2) > 1.01)
        if grid_far:  # a wrap-around link of a torus: an arc outside the grid
            ax.annotate("", xy=(x2, y2), xytext=(x1, y1),
                        arrowprops=dict(arrowstyle="-", color=kcol[kind], lw=lw, alpha=0.8,
                                        connectionstyle="arc3,rad=0.35"))
        else:
            ax.plot([x1, x2], [y1, y2], color=kcol[kind], lw=lw, alpha=0.8, zorder=1)
        if count > 1:
            ax.text((x1 + x2) / 2, (y1 + y2) / 2, "x%d" % count, fontsize=7, ha="center", va="center",
                    bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.8), zorder=3)
    for d in devs:
        ax.scatter(*pos[d], s=500, color="#fdd49e", edgecolor="black", zorder=2)
        ax.text(*pos[d], d, ha="center", va="center", fontsize=8, zorder=4)
    for s in sws:
        ax.scatter(*pos[s], s=700, marker="s", color="#c6dbef", edgecolor="black", zorder=2)
        ax.text(*pos[s], s, ha="center", va="center", fontsize=7, zorder=4)
    for k in kinds:
        info = next(l[4] for l in t["links"] if l[2] == k)
        cnt = next(l[3] for l in t["links"] if l[2] == k)
        per = re.search(r"([\d.]+) GB/s per direction, ([\d.]+) ns", info)
        ax.plot([], [], color=kcol[k], lw=2,
                label="%s: %s" % (k, "%.4g GB/s per link per direction, %s ns; xN = N links" %
                                  (float(per.group(1)) / cnt, per.group(2)) if per else info))
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.02), frameon=False)
    ax.set_title("%s (%s%s), model %s" % (t["name"], t["kind"], " %dx%d" % (t["w"], t["h"]) if t["w"] else "",
                                          t["model"]))
    ax.set_aspect("equal")
    ax.margins(0.25)
    ax.axis("off")
    fig.savefig(out_path, bbox_inches="tight")
    plt.close(fig)
    print("figures: wrote " + out_path)


def fig_topologies(data, out):
    found = False
    for f in sorted(os.listdir(data)) if os.path.isdir(data) else []:
        if f.startswith("topo_") and f.endswith(".txt"):
            with open(os.path.join(data, f)) as fh:
                draw_topology(parse_topo_show(fh.read()), os.path.join(out, "topology_%s.png" % f[5:-4]))
            found = True
    if not found:
        note("topology: no %s/topo_NAME.txt (arsim topo show output)" % data)


# ------------------------------------------------------------ model vs measured

def fig_model_vs_measured(results, out):
    path = os.path.join(results, "compare.csv")
    rows = read_csv(path)
    if not rows:
        note("model vs measured: needs %s (arsim validate --measured ... -o)" % path)
        return
    meta = comments(path)
    places = sorted({int(r["ranks_per_device"]) for r in rows})
    fig, axes = plt.subplots(2, len(places), figsize=(4.6 * len(places), 7.2), squeeze=False,
                             gridspec_kw={"height_ratios": [2.2, 1]}, sharex=True)
    for j, rp in enumerate(places):
        ax, ae = axes[0][j], axes[1][j]
        sub = [r for r in rows if int(r["ranks_per_device"]) == rp]
        for a in algo_order({r["algo"] for r in sub}):
            pts = sorted((float(r["bytes"]), float(r["measured_us"]), float(r["predicted_us"]), float(r["error_pct"]))
                         for r in sub if r["algo"] == a)
            c, m = style(a)
            x = [p[0] for p in pts]
            ax.plot(x, [p[1] for p in pts], linestyle="none", marker=m, color=c, ms=4, label="%s measured" % a)
            ax.plot(x, [p[2] for p in pts], color=c, lw=1.2, label="%s model" % a)
            ae.plot(x, [p[3] for p in pts], marker=m, color=c, ms=3, lw=0.8)
        log_y(ax)
        ax.set_ylabel("latency (us)")
        n = int(sub[0]["nranks"])
        ax.set_title("%d rank%s per GPU (%d ranks on 2 GPUs)" % (rp, "" if rp == 1 else "s", n))
        ae.axhspan(-5, 5, color="#2ca02c", alpha=0.12, label="|error| <= 5%")
        ae.axhspan(-15, -5, color="#ff7f0e", alpha=0.10)
        ae.axhspan(5, 15, color="#ff7f0e", alpha=0.10, label="5% < |error| <= 15%")
        ae.axhline(0, color="black", lw=0.6)
        errs = [abs(float(r["error_pct"])) for r in sub]
        lim = max(20, min(100, max(errs) * 1.1))
        ae.set_ylim(-lim, lim)
        ae.set_ylabel("error (%)\n(model - measured) / measured")
        bytes_axis(ae, [float(r["bytes"]) for r in sub])
        ae.set_xlabel("bytes per rank (%s)" % sub[0]["dtype"])
        if j == 0:
            ae.legend(loc="lower left")
    seen = {}
    for row_ax in axes[0]:
        for h, l in zip(*row_ax.get_legend_handles_labels()):
            seen.setdefault(l, h)
    fig.legend(list(seen.values()), list(seen.keys()), fontsize=7, ncol=7, loc="lower center",
               bbox_to_anchor=(0.5, -0.06), title="markers: measured (cuda backend); lines: model (sim backend)")
    allerr = sorted(abs(float(r["error_pct"])) for r in rows)
    med = allerr[len(allerr) // 2] if len(allerr) % 2 else 0.5 * (allerr[len(allerr) // 2 - 1] + allerr[len(allerr) // 2])
    fig.suptitle("Model (sim backend, calibrated from micro-benchmarks) vs measured on %s, %s\n"
                 "%d rows: median |error| %.1f%%, max %.1f%%" %
                 (meta.get("device", "?"), meta.get("measured on", "?"), len(rows), med, allerr[-1]))
    fig.tight_layout()
    save(fig, out, "model_vs_measured.png")


# ------------------------------------------------------------ validation, file by file

# The latest validation run of each GPU kind: every compare_*.csv in these folders gets a figure.
VALIDATION_RUNS = ["h200/fresh_2026-11-28T1248", "h200/fresh_2026-12-02T2252_1gpu", "h200/fresh_2026-12-02T0531_1gpu", "h200/fresh_2026-12-02T0126_1gpu", "h200/fresh_2026-12-01T1739_1gpu", "h200/fresh_2026-12-01T2200_1gpu", "h100/fresh_2026-11-27T2130", "h100/fresh_2026-11-28T0620_1gpu"]


def diagonal_band(ax, rows):
    """Predicted against measured: the diagonal, the band within 15%, both axes over the rows."""
    lo = min(min(float(r["measured_us"]), float(r["predicted_us"])) for r in rows) * 0.8
    hi = max(max(float(r["measured_us"]), float(r["predicted_us"])) for r in rows) * 1.25
    ax.plot([lo, hi], [lo, hi], color="black", lw=0.7)
    ax.fill_between([lo, hi], [lo * 0.85, hi * 0.85], [lo * 1.15, hi * 1.15], color="#2ca02c", alpha=0.12, lw=0)
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)


def fig_validation(results, out):
    """Predicted against measured, log-log, a panel per algorithm, for each compared file."""
    drawn = 0
    for run in VALIDATION_RUNS:
        d = os.path.join(results, run)
        for path in sorted(glob.glob(os.path.join(d, "compare_*.csv"))):
            rows = read_csv(path)
            if not rows:
                continue
            meta = comments(path)
            algos = algo_order({r["algo"] for r in rows})
            cols = min(4, len(algos))
            nrow = (len(algos) + cols - 1) // cols
            fig, axes = plt.subplots(nrow, cols, figsize=(3.3 * cols, 3.2 * nrow), squeeze=False)
            places = sorted({int(r["ranks_per_device"]) for r in rows})
            marks = "os^Dv"
            for i, a in enumerate(algos):
                ax = axes[i // cols][i % cols]
                sub = [r for r in rows if r["algo"] == a]
                c, _ = style(a)
                for j, rp in enumerate(places):
                    pts = [(float(r["measured_us"]), float(r["predicted_us"])) for r in sub
                           if int(r["ranks_per_device"]) == rp]
                    if pts:
                        ax.loglog([p[0] for p in pts], [p[1] for p in pts], linestyle="none",
                                  marker=marks[j % len(marks)], color=c, ms=3.5, alpha=0.85,
                                  label="%d rank%s a GPU" % (rp, "" if rp == 1 else "s"))
                diagonal_band(ax, sub)
                errs = sorted(abs(float(r["error_pct"])) for r in sub)
                ax.set_title("%s: median %.1f%%, max %.1f%%" % (a, errs[len(errs) // 2], errs[-1]), fontsize=8.5)
                ax.tick_params(labelsize=7)
                if i % cols == 0:
                    ax.set_ylabel("predicted (us)", fontsize=8)
                if i // cols == nrow - 1 or i + cols >= len(algos):
                    ax.set_xlabel("measured (us)", fontsize=8)
                if i == 0 and len(places) > 1:
                    ax.legend(fontsize=6.5, loc="upper left")
            for i in range(len(algos), nrow * cols):
                axes[i // cols][i % cols].axis("off")
            allerr = sorted(abs(float(r["error_pct"])) for r in rows)
            fname = os.path.basename(path)[len("compare_"):-len(".csv")]
            model = rows[0].get("model", "?")
            fig.suptitle("%s, measured %s UTC (%s.csv), predicted by %s on %s\n%d rows: median |error| %.1f%%, "
                         "max %.1f%%; the band: within 15%%" %
                         (meta.get("device", "?"), meta.get("measured on", "?")[:16].replace("T", " "), fname,
                          rows[0].get("predict_backend", "?"), model, len(rows), allerr[len(allerr) // 2], allerr[-1]),
                         fontsize=9)
            fig.tight_layout()
            kind, when = run.split("/")[0], run.split("/")[-1].replace("fresh_", "")
            save(fig, out, "validation_%s_%s_%s.png" % (kind, when, fname))
            drawn += 1
    if not drawn:
        note("validation: needs compare_*.csv in %s" % ", ".join(os.path.join(results, r) for r in VALIDATION_RUNS))


# The latest runs of fresh rows, each drawn whole: a panel per measured file (placement, dtype,
# counts or channels), every algorithm in its colour.
VALIDATION_SETS = ["h100/fresh_2026-12-05T1406_1gpu", "h200/fresh_2026-12-04T0820_1gpu",
                   "h200/fresh_2026-12-04T0837_1gpu", "h200/fresh_2026-12-04T1216_1gpu"]


def fig_validation_sets(results, out):
    """A run of fresh rows in one figure: predicted against measured, a panel per file."""
    drawn = 0
    for run in VALIDATION_SETS:
        paths = sorted(glob.glob(os.path.join(results, run, "compare_*.csv")),
                       key=lambda p: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p)])
        files = [(p, read_csv(p)) for p in paths]
        files = [(p, rows) for p, rows in files if rows]
        if not files:
            continue
        cols = min(5, len(files))
        nrow = (len(files) + cols - 1) // cols
        fig, axes = plt.subplots(nrow, cols, figsize=(3.0 * cols, 3.0 * nrow), squeeze=False)
        met = [0, 0]
        for i, (path, rows) in enumerate(files):
            ax = axes[i // cols][i % cols]
            for a in algo_order({r["algo"] for r in rows}):
                c, m = style(a)
                pts = [(float(r["measured_us"]), float(r["predicted_us"])) for r in rows if r["algo"] == a]
                ax.loglog([p[0] for p in pts], [p[1] for p in pts], linestyle="none", marker=m, color=c, ms=3,
                          alpha=0.8, label=a)
            diagonal_band(ax, rows)
            errs = sorted(abs(float(r["error_pct"])) for r in rows)
            med, top = (errs[(len(errs) - 1) // 2] + errs[len(errs) // 2]) / 2, errs[-1]  # as validate's summary
            met[0] += med <= 5
            met[1] += top <= 15
            name = os.path.basename(path)[len("compare_measured_1gpu_"):-len(".csv")].replace("_", " ")
            ax.set_title("%s: %.1f%% / %.1f%%" % (name, med, top), fontsize=8.5)
            ax.tick_params(labelsize=6.5)
            if i % cols == 0:
                ax.set_ylabel("predicted (us)", fontsize=8)
            if i + cols >= len(files):
                ax.set_xlabel("measured (us)", fontsize=8)
            if i == 0:
                ax.legend(fontsize=6, loc="upper left")
        for i in range(len(files), nrow * cols):
            axes[i // cols][i % cols].axis("off")
        meta = comments(files[0][0])
        rows = files[0][1]
        fig.suptitle("%s, fresh rows %s UTC, predicted by %s on %s\nmedian / max |error| per file: "
                     "median <= 5%% in %d of %d files, max <= 15%% in %d; the band: within 15%%" %
                     (meta.get("device", "?"), meta.get("measured on", "?")[:16].replace("T", " "),
                      rows[0].get("predict_backend", "?"), rows[0].get("model", "?"), met[0], len(files), met[1]),
                     fontsize=9)
        fig.tight_layout()
        kind, when = run.split("/")[0], run.split("/")[-1].replace("fresh_", "")
        save(fig, out, "validation_set_%s_%s.png" % (kind, when))
        drawn += 1
    if not drawn:
        note("validation_sets: needs compare_*.csv in %s" % ", ".join(os.path.join(results, r) for r in VALIDATION_SETS))


# ------------------------------------------------------------ model vs reference

def broken_pair(fig, spec, lo, hi):
    """Two stacked axes sharing x: the upper shows hi=(ymin, ymax), the lower lo."""
    gs = spec.subgridspec(2, 1, hspace=0.08, height_ratios=[1, 1.6])
    top = fig.add_subplot(gs[0])
    bot = fig.add_subplot(gs[1], sharex=top)
    top.set_ylim(*hi)
    bot.set_ylim(*lo)
    top.spines["bottom"].set_visible(False)
    bot.spines["top"].set_visible(False)
    top.tick_params(labelbottom=False, bottom=False)
    d = 0.012
    kw = dict(transform=top.transAxes, color="k", clip_on=False, lw=1)
    top.plot((-d, +d), (-d * 1.6, +d * 1.6), **kw)
    top.plot((1 - d, 1 + d), (-d * 1.6, +d * 1.6), **kw)
    kw.update(transform=bot.transAxes)
    bot.plot((-d, +d), (1 - d, 1 + d), **kw)
    bot.plot((1 - d, 1 + d), (1 - d, 1 + d), **kw)
    return top, bot


def fig_model_vs_reference(data, results, out):
    refs = read_csv(os.path.join(results, "refs.csv"))
    nel = read_csv(os.path.join(data, "buffer_kind.csv"))
    h200 = read_csv(os.path.join(data, "h100_model.csv"))
    if not refs:
        note("model vs reference: needs %s/refs.csv (arsim validate --refs -o)" % results)
        return
    fig = plt.figure(figsize=(12, 5))
    outer = fig.add_gridspec(1, 2, wspace=0.28)

    # (a) FSIM single-device reference against the accelerator model's curves.
    fsim = [r for r in refs if r["source"] == "FSIM"]
    top, bot = broken_pair(fig, outer[0], (0, 1), (0, 1))
    maxmodel = 1.0
    if nel:
        algos = algo_order({r["algo"] for r in nel})
        for a in algos:
            for b, ls in (("hbm", "-"),):
                pts = sorted((float(r["count"]), float(r["time_us"])) for r in nel if r["algo"] == a and r["buffer"] == b)
                if not pts:
                    continue
                c, m = style(a)
                for ax in (top, bot):
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], ls, color=c, marker=m, ms=3,
                            label="model: %s" % a if ax is bot else None)
                maxmodel = max(maxmodel, max(p[1] for p in pts))
    for r in fsim:
        ref = float(r["ref_us"])
        for ax in (top, bot):
            ax.axhline(ref, color="black", lw=2, label="FSIM reference %.0f us (size not recorded)" % ref if ax is top else None)
        top.set_ylim(ref * 0.9, ref * 1.05)
        if r.get("model_us"):
            q = float(r["model_over_ref"])
            top.text(0.02, 0.25, "model at n_elem 49152 (%s): %.1f us = %.3f x reference" %
                     (r["model_algo"], float(r["model_us"]), q), transform=top.transAxes, fontsize=8)
    bot.set_ylim(0, maxmodel * 1.15)
    top.set_xscale("log", base=2)
    bot.xaxis.set_major_formatter(FuncFormatter(lambda v, p: "%d" % v))
    bot.set_xlabel("elements per rank (n_elem, fp32)")
    bot.set_ylabel("allreduce latency (us)")
    top.set_title("(a) FSIM single-device reference vs the model:\naccelerator, torus_2d 3x2, accel_tcm, buffers in hbm")
    top.legend(loc="upper right", fontsize=7)
    bot.legend(loc="upper left", fontsize=7, ncol=2)

    # (b) the earlier kernel on 2 x H100 against the model (h100_sxm) and our measurement.
    mojo = [r for r in refs if r["topology"] == "h100_pair"]
    if mojo:
        refv = [float(r["ref_us"]) / 1e3 for r in mojo]
        modv = [float(r["model_us"]) / 1e3 for r in mojo if r["model_us"]]
        meav = [float(r["measured_us"]) / 1e3 for r in mojo if r["measured_us"]]
        low = max(modv + meav + [0.1])
        top2, bot2 = broken_pair(fig, outer[1], (0, low * 1.3), (min(refv) * 0.8, max(refv) * 1.1))
        for ax in (top2, bot2):
            for dt, mk in (("bf16", "o"), ("fp32", "s")):
                sel = [r for r in mojo if r["dtype"] == dt and "multimem" not in r["source"]]
                xs = [float(r["bytes"]) for r in sel]
                ax.plot(xs, [float(r["ref_us"]) / 1e3 for r in sel], "k" + mk, ms=6, linestyle="-" if dt == "bf16" else "none",
                        label=("earlier kernel, 2xH100, %s (reference)" % dt) if ax is top2 else None)
            mm = [r for r in mojo if "multimem" in r["source"]]
            ax.plot([float(r["bytes"]) for r in mm], [float(r["ref_us"]) / 1e3 for r in mm], "k^", ms=7, mfc="none",
                    label="earlier kernel, multimem path (reference; the three\n256M points coincide at 86.4 ms)" if ax is top2 else None)
            sel = sorted((float(r["bytes"]), float(r["model_us"]) / 1e3) for r in mojo if r["dtype"] == "bf16" and r["model_us"])
            ax.plot([p[0] for p in sel], [p[1] for p in sel], "-", color=style("2stage")[0], marker="D", ms=4,
                    label="model: 2stage, h100_sxm" if ax is bot2 else None)
            if h200:
                pts = sorted((float(r["bytes"]), float(r["time_us"]) / 1e3) for r in h200 if r["algo"] == "2stage"
                             and float(r["bytes"]) >= 32 << 20)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], ":", color=style("2stage")[0], lw=1,
                        label=None)
            sel = sorted((float(r["bytes"]), float(r["measured_us"]) / 1e3) for r in mojo if r["dtype"] == "bf16" and r["measured_us"])
            if sel:
                ax.plot([p[0] for p in sel], [p[1] for p in sel], "*", color="#2ca02c", ms=9,
                        label="arsim 2stage measured on 2xH200" if ax is bot2 else None)
        bytes_axis(bot2, [float(r["bytes"]) for r in mojo])
        bot2.set_xlabel("bytes per rank")
        bot2.set_ylabel("allreduce latency (ms)")
        ratio = [float(r["model_over_ref"]) for r in mojo if r["model_over_ref"]]
        top2.set_title("(b) earlier kernel on 2 x H100 NV18 vs the model\n%s" %
                       ("model / reference = %.4f .. %.4f" % (min(ratio), max(ratio)) if ratio else ""))
        top2.legend(loc="upper left", fontsize=7)
        bot2.legend(loc="upper left", fontsize=7)
    fig.suptitle("Model vs external references (validate/refs/*.csv); y axes broken where the scales differ", y=1.02)
    save(fig, out, "model_vs_reference.png")


# ------------------------------------------------------------ busbw vs NCCL

def fig_busbw(data, results, out):
    path = os.path.join(results, "measured.csv")
    meas = read_csv(path)
    model = read_csv(os.path.join(data, "h200_model.csv"))
    if not meas:
        note("busbw: needs %s (arsim validate --measure-only on a GPU machine)" % path)
        return
    meta = comments(path)
    one = [r for r in meas if int(r["nranks"]) == 2]
    fig, ax = plt.subplots(figsize=(8.5, 5))
    nccl = sorted((float(r["bytes"]), float(r["busbw_gbps"])) for r in one if r["backend"] == "nccl")
    best = defaultdict(float)
    for a in algo_order({r["algo"] for r in one if r["backend"] == "cuda"}):
        pts = sorted((float(r["bytes"]), float(r["busbw_gbps"])) for r in one if r["backend"] == "cuda" and r["algo"] == a)
        c, m = style(a)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=m, color=c, lw=0.8, ms=3, alpha=0.7,
                label="arsim %s (measured)" % a)
        for x, y in pts:
            best[x] = max(best[x], y)
    if nccl:
        ax.plot([p[0] for p in nccl], [p[1] for p in nccl], "k*-", lw=2, ms=7, label="NCCL (measured, same run)")
    if best:
        xs = sorted(best)
        ax.plot(xs, [best[x] for x in xs], color="#2ca02c", lw=2.5, alpha=0.5, label="arsim, best algorithm per size")
    if model:
        mb = defaultdict(float)
        for r in model:
            if int(r["nranks"]) == 2:
                mb[float(r["bytes"])] = max(mb[float(r["bytes"])], float(r["busbw_gbps"]))
        xs = sorted(mb)
        ax.plot(xs, [mb[x] for x in xs], "--", color="#d62728", lw=1.5, label="model (calibrated), best algorithm")
    bytes_axis(ax, [float(r["bytes"]) for r in one])
    log_y(ax)
    ax.set_xlabel("bytes per rank (%s)" % (one[0]["dtype"] if one else "?"))
    ax.set_ylabel("bus bandwidth (GB/s), busbw = algbw * 2(p-1)/p")
    ax.set_title("Allreduce busbw vs size, 2 ranks on %s\n%s" % (meta.get("device", "?"), meta.get("date", "")))
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    save(fig, out, "busbw_vs_nccl.png")


def fig_symm_mem(bench, out):
    """busbw against size on the GPUs of one call: arsim's auto and NCCL (arsim bench, its CSV) beside
    PyTorch's symmetric-memory one-shot and two-shot and NCCL through torch (bench/symm_mem.py,
    the same machine and call), with the floor: bytes over the measured two-way link ceiling."""
    ours = read_csv(os.path.join(bench, "bench_auto.csv")) or read_csv(os.path.join(bench, "auto.csv"))
    symm = read_csv(os.path.join(bench, "symm_mem.csv"))
    if not ours or not symm:
        note("symm_mem: needs bench_auto.csv (or auto.csv) and symm_mem.csv in %s (bench/symm_mem.py, arsim bench)" % bench)
        return
    device = ours[0].get("device", "?")
    ngpus = int(ours[0].get("ngpus") or 2)
    fig, ax = plt.subplots(figsize=(8.5, 5))
    pts = sorted((float(r["size_bytes"]), float(r["busbw_gbps"])) for r in ours)
    ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color="#2ca02c", lw=2.5, ms=4, label="arsim auto")
    pts = sorted((float(r["size_bytes"]), float(r["nccl_busbw_gbps"])) for r in ours)
    ax.plot([p[0] for p in pts], [p[1] for p in pts], "k*-", lw=1.5, ms=6, label="NCCL (ncclAllReduce, arsim bench)")
    for op, (c, m, label) in {"two_shot": ("#9467bd", "D", "torch symm_mem two-shot"),
                              "one_shot": ("#d62728", "v", "torch symm_mem one-shot"),
                              "nccl": ("#7f7f7f", "x", "NCCL through torch.distributed")}.items():
        pts = sorted((float(r["bytes"]), float(r["busbw_gbps"])) for r in symm if r["op"] == op and r["busbw_gbps"])
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=m, color=c, lw=0.9, ms=3.5, alpha=0.8, label=label)
    xs = sorted(float(r["size_bytes"]) for r in ours)
    ax.plot(xs, [366.0] * len(xs), ":", color="#1f77b4", lw=1.2, label="floor: two-way link ceiling, 366 GB/s")
    bytes_axis(ax, xs)
    log_y(ax)
    ax.set_xlabel("bytes per rank (bf16)")
    ax.set_ylabel("bus bandwidth (GB/s), busbw = algbw * 2(p-1)/p")
    ax.set_title("Allreduce busbw vs size, %d x %s, one call\n%s" % (ngpus, device, os.path.basename(bench.rstrip("/"))))
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    save(fig, out, "busbw_vs_symm_mem.png" if ngpus == 2 else "busbw_vs_symm_mem_%dgpu.png" % ngpus)


FIGS = {
    "latency": lambda a: fig_latency(a.data, a.out),
    "buffer_kind": lambda a: fig_buffer_kind(a.data, a.out),
    "topology": lambda a: fig_topologies(a.data, a.out),
    "model_vs_measured": lambda a: fig_model_vs_measured(a.results, a.out),
    "validation": lambda a: fig_validation(a.validation, a.out),
    "validation_sets": lambda a: fig_validation_sets(a.validation, a.out),
    "model_vs_reference": lambda a: fig_model_vs_reference(a.data, a.results, a.out),
    "busbw": lambda a: fig_busbw(a.data, a.results, a.out),
    "symm_mem": lambda a: [fig_symm_mem(b, a.out) for b in a.bench.split(",")],
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(here)
    ap.add_argument("--data", default=os.path.join(here, "data"), help="simulated sweep CSVs")
    ap.add_argument("--results", default=os.path.join(top, "validate", "results"), help="validate results")
    ap.add_argument("--validation", default=os.path.join(top, "validate", "results"),
                    help="the per-kind validation runs (KIND/fresh_DATE/compare_*.csv)")
    ap.add_argument("--bench", default=",".join(os.path.join(top, "bench", "results", d) for d in
                                                 ("h200x2_2026-11-28T1335_auto_symm", "h200x4_2026-11-27T1635")),
                    help="folders (comma list) of a GPU call's arsim bench and bench/symm_mem.py CSVs")
    ap.add_argument("--out", "-o", default=os.path.join(top, "docs", "figures"), help="output folder (or file for --topology)")
    ap.add_argument("--only", default="", help="comma list of: " + ", ".join(FIGS))
    ap.add_argument("--topology", help="draw one topology (file or SPEC) through `arsim topo show`")
    ap.add_argument("--arsim", default=os.environ.get("ARSIM", "arsim"), help="the arsim binary (for --topology)")
    a = ap.parse_args()
    if a.topology:
        out = a.out if a.out.endswith(".png") else os.path.join(a.out, "topology.png")
        draw_topology(parse_topo_show(topo_show(a.arsim, a.topology)), out)
        return 0
    os.makedirs(a.out, exist_ok=True)
    only = [s for s in a.only.split(",") if s]
    for s in only:
        if s not in FIGS:
            ap.error("--only %s: unknown figure (%s)" % (s, ", ".join(FIGS)))
    for name, fn in FIGS.items():
        if not only or name in only:
            fn(a)
    if FAILED:
        print("figures: %d figure(s) had nothing to draw: %s" % (len(FAILED), ", ".join(FAILED)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
