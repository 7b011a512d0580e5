#!/usr/bin/env python3
"""arsim plot: a figure from any CSV arsim writes (run --csv, sweep --out, validate
--measure-only, bench --csv, validate -o, validate --refs -o).

usage: arsim plot FILE.csv [-o FILE.png] [--y busbw|algbw|time|efficiency|error|ratio]
                           [--title TEXT]

The x axis is the message size per rank (log2); the y axis busbw for result rows and
bench rows, the prediction's error for validate's comparison, model/reference for the
references. One line per algorithm, and per whatever else varies between rows
(topology, backend, model, dtype, buffer, ranks). Exits 2 with one line on stderr,
writing nothing, when the file holds nothing it can draw.
"""
import csv
import math
import os
import stat
import sys
import tempfile

PROG = "arsim plot"


def fail(msg):
    sys.stderr.write("%s: %s\n" % (PROG, msg.replace("\n", " ")))
    sys.exit(2)


# What each kind of CSV is recognised by, and how its axes are read.
#   x: the size column; y: {name: (column or function, axis label, log?)}; default y;
#   series: the columns whose values tell lines apart.
def _num(r, c):
    try:
        v = float(r[c])
    except (KeyError, TypeError, ValueError):
        return math.nan
    return v


KINDS = [
    {
        "name": "result rows (run, sweep, validate --measure-only)",
        "needs": {"backend", "algo", "bytes", "time_us", "busbw_gbps"},
        "x": "bytes",
        "y": {
            "busbw": (lambda r: _num(r, "busbw_gbps"), "busbw (GB/s)", False),
            "algbw": (lambda r: _num(r, "algbw_gbps"), "algbw (GB/s)", False),
            "time": (lambda r: _num(r, "time_us"), "time (us)", True),
            "efficiency": (lambda r: _num(r, "efficiency"), "efficiency (bound / time)", False),
        },
        "default": "busbw",
        "series": ["backend", "topology", "model", "nranks", "dtype", "buffer", "algo"],
    },
    {
        "name": "bench rows (bench --csv)",
        "needs": {"size_bytes", "algo", "time_us", "busbw_gbps"},
        "x": "size_bytes",
        "y": {
            "busbw": (lambda r: _num(r, "busbw_gbps"), "busbw (GB/s)", False),
            "algbw": (lambda r: _num(r, "algbw_gbps"), "algbw (GB/s)", False),
            "time": (lambda r: _num(r, "time_us"), "time (us)", True),
        },
        "default": "busbw",
        "series": ["nranks", "dtype", "algo"],
        # auto names the plan it picked at each size (auto:2stage/128): one line for auto
        "normalize": {"algo": lambda v: "auto" if v.startswith("auto:") else v},
        # NCCL's time at each size is a column of every row: its own line
        "extra": {"busbw": ("nccl_busbw_gbps", "NCCL"), "time": ("nccl_time_us", "NCCL")},
    },
    {
        "name": "validate's comparison (validate -o)",
        "needs": {"bytes", "algo", "measured_us", "predicted_us", "error_pct"},
        "x": "bytes",
        "y": {
            "error": (lambda r: _num(r, "error_pct"), "prediction error (%)", False),
            "time": (lambda r: _num(r, "measured_us"), "measured time (us)", True),
        },
        "default": "error",
        "series": ["topology", "ranks_per_device", "dtype", "algo"],
    },
    {
        "name": "references (validate --refs -o)",
        "needs": {"source", "bytes", "ref_us", "model_us", "model_over_ref"},
        "x": "bytes",
        "y": {
            "ratio": (lambda r: _num(r, "model_over_ref"), "model / reference", True),
            "time": (lambda r: _num(r, "ref_us"), "reference time (us)", True),
        },
        "default": "ratio",
        "series": ["source", "system", "algorithm", "dtype"],
    },
]


# How a series column reads in a legend when it is a bare number.
LABEL = {"nranks": "%s ranks", "ranks_per_device": "%s/device", "channels": "%s ch"}


def size_label(b):
    for i, suf in enumerate(["", "K", "M", "G", "T"]):
        if b < 1024 ** (i + 1) or suf == "T":
            v = b / 1024 ** i
            return ("%d%s" % (v, suf)) if v == int(v) else ("%.3g%s" % (v, suf))
    return str(b)


def parse_args(argv):
    path = out = title = None
    y = None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            sys.stdout.write(__doc__.split("\n\n")[1] + "\n")
            sys.exit(0)
        if a in ("-o", "--out", "--y", "--title"):
            if i + 1 >= len(argv):
                fail("option '%s' needs a value" % a)
            v = argv[i + 1]
            if a in ("-o", "--out"):
                if not v:
                    fail("-o '': empty file name")
                if v.startswith("-"):
                    fail("-o '%s': looks like an option, not a file (a file of that name: ./%s)" % (v, v))
                out = v
            elif a == "--y":
                y = v
            else:
                title = v
            i += 2
            continue
        if a.startswith("-") and a != "-":
            fail("unknown option '%s' (see arsim plot --help)" % a)
        if path is not None:
            fail("unexpected argument '%s': one CSV file at a time" % a)
        path = a
        i += 1
    if path is None:
        fail("which CSV? (arsim plot FILE.csv [-o FILE.png])")
    return path, out, y, title


def read_rows(path):
    try:
        with open(path, newline="") as f:
            lines = [l for l in f if l.strip() and not l.startswith("#")]
    except OSError as e:
        fail("%s: cannot read: %s" % (path, e.strerror))
    except UnicodeDecodeError:
        fail("%s: not a text file" % path)
    if not lines:
        fail("%s: no header and no rows: nothing to plot" % path)
    try:
        reader = csv.DictReader(lines)
        rows = list(reader)
    except csv.Error as e:
        fail("%s: not a CSV: %s" % (path, e))
    return reader.fieldnames or [], rows


def main(argv):
    path, out, yname, title = parse_args(argv)
    cols, rows = read_rows(path)
    kind = next((k for k in KINDS if k["needs"] <= set(cols)), None)
    if kind is None:
        fail("%s: not a CSV arsim plots (its columns: %s); arsim plot reads %s" %
             (path, ",".join(cols[:8]) + (",..." if len(cols) > 8 else ""),
              "; ".join(k["name"] for k in KINDS)))
    yname = yname or kind["default"]
    if yname not in kind["y"]:
        fail("--y '%s': %s have %s" % (yname, kind["name"], ", ".join(sorted(kind["y"]))))
    yfn, ylabel, ylog = kind["y"][yname]
    if yname == "efficiency" and "efficiency" not in cols:
        fail("--y efficiency: %s has no efficiency column" % path)

    # Lines: the series columns that vary; the ones that do not go in the title.
    norm = kind.get("normalize", {})
    for r in rows:
        for c, f in norm.items():
            if r.get(c):
                r[c] = f(r[c])
    present = [c for c in kind["series"] if c in cols]
    varying = [c for c in present if len({r.get(c, "") for r in rows}) > 1]
    fixed = [LABEL.get(c, "%s") % rows[0][c] for c in present if c not in varying and rows and rows[0].get(c, "")]
    if "algo" in present and "algo" not in varying:
        varying.append("algo")
    lines = {}
    for r in rows:
        x, y = _num(r, kind["x"]), yfn(r)
        if not (x > 0 and math.isfinite(y)) or (ylog and y <= 0):
            continue
        label = " ".join(LABEL.get(c, "%s") % r[c] for c in varying if r.get(c, "")) or "rows"
        lines.setdefault(label, {})[x] = y
    extra = kind.get("extra", {}).get(yname)
    if extra:
        pts = {}
        for r in rows:
            x, y = _num(r, kind["x"]), _num(r, extra[0])
            if x > 0 and math.isfinite(y) and y > 0:
                pts[x] = y
        if pts:
            lines[extra[1]] = pts
    npts = sum(len(p) for p in lines.values())
    if npts == 0:
        fail("%s: %d rows, none with a size and a %s to draw: nothing to plot" % (path, len(rows), yname))

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail("matplotlib is not installed (Debian: apt-get install python3-matplotlib)")

    out = out or (os.path.splitext(path)[0] + ".png")
    # as arsim's own outputs: a symlink's target is written (the link stays), a directory is
    # refused, a device or FIFO written in place, a regular file replaced whole
    target = os.path.realpath(out)
    if target == os.path.realpath(path):
        fail("-o %s: the same file as the input" % out)
    if os.path.isdir(target):
        fail("-o %s: a directory, not a file" % out)
    in_place = os.path.exists(target) and not stat.S_ISREG(os.stat(target).st_mode)
    fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
    markers = "os^Dv<>ph*"
    colors = plt.get_cmap("tab10" if len(lines) <= 10 else "tab20").colors
    for i, (label, pts) in enumerate(sorted(lines.items())):
        xs = sorted(pts)
        ax.plot(xs, [pts[x] for x in xs], marker=markers[i % len(markers)], markersize=4,
                linewidth=1.4, label=label, color=colors[i % len(colors)])
    ax.set_xscale("log", base=2)
    if ylog:
        ax.set_yscale("log")
    xs = sorted({x for p in lines.values() for x in p})
    step = max(1, len(xs) // 12)
    ax.set_xticks(xs[::step])
    ax.set_xticklabels([size_label(x) for x in xs[::step]], rotation=45)
    ax.set_xlabel("message size per rank (bytes)")
    ax.set_ylabel(ylabel)
    if yname == "error":
        ax.axhline(0, color="0.5", linewidth=0.8)
    ax.grid(True, which="major", alpha=0.3)
    ax.set_title(title or ", ".join([os.path.basename(path)] + fixed), fontsize=10)
    if len(lines) > 1 or list(lines) != ["rows"]:
        ax.legend(fontsize=8, ncol=2 if len(lines) > 8 else 1)
    fig.tight_layout()
    # Written beside the target and renamed: a failed write leaves what was there.
    d = os.path.dirname(target)
    tmp = None
    try:
        if in_place:
            fig.savefig(target, format="png")
        else:
            fd, tmp = tempfile.mkstemp(prefix=".arsim-plot-", suffix=".png", dir=d)
            os.close(fd)
            fig.savefig(tmp)
            os.replace(tmp, target)
    except OSError as e:
        try:
            if tmp:
                os.unlink(tmp)
        except OSError:
            pass
        fail("-o %s: cannot write: %s" % (out, e.strerror))
    sys.stderr.write("%s: %s: %d lines, %d points (%s against size)\n" % (PROG, out, len(lines), npts, yname))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
