#!/usr/bin/env python3
"""Set two op timelines of one plan side by side: what each kind of op takes on average.

    scripts/timeline-compare.py MEASURED.csv MODEL.csv RANKS_PER_DEVICE

MEASURED.csv comes from the GPUs (ARSIM_CUDA_TIMELINE=FILE arsim bench --backend cuda ...),
MODEL.csv from the sim backend on the same plan (ARSIM_SIM_TIMELINE=FILE arsim run --backend sim
... with the same ranks, channels and size); both are gpu,rank,chan,op,code,target,start_ns,end_ns.
Ops are grouped by code and, for COPY, REDUCE and SIGNAL, by where their target is: "in" (a rank of
the same device, ranks placed RANKS_PER_DEVICE to a device in order), "x" (another device), "host".
For each group: ops per channel, the mean time on each side, and what the difference adds up to
per channel. A negative sum means the model is faster.
"""
import collections
import csv
import sys

HEADER = ["gpu", "rank", "chan", "op", "code", "target", "start_ns", "end_ns"]


def fail(msg):
    print("timeline-compare: " + msg, file=sys.stderr)
    sys.exit(2)


def load(path, per_device):
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        fail("%s: %s" % (path, e.strerror))
    if not rows or rows[0] != HEADER:
        fail("%s: line 1: want the header %s" % (path, ",".join(HEADER)))
    times, spans = collections.defaultdict(list), {}
    for n, r in enumerate(rows[1:], start=2):
        try:
            rank, target, a, b = int(r[1]), int(r[5]), float(r[6]), float(r[7])
            code = r[4]
        except (IndexError, ValueError):
            fail("%s: line %d: want 8 fields, rank and target whole numbers, times in ns" % (path, n))
        if code in ("COPY", "REDUCE", "SIGNAL"):
            where = "host" if target < 0 else ("in" if target // per_device == rank // per_device else "x")
            code += "-" + where
        times[code].append(b - a)
        key = (rank, r[2])
        lo, hi = spans.get(key, (a, b))
        spans[key] = (min(lo, a), max(hi, b))
    if not spans:
        fail("%s: no ops" % path)
    return times, spans


def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0)
    if len(sys.argv) != 4:
        fail("usage: scripts/timeline-compare.py MEASURED.csv MODEL.csv RANKS_PER_DEVICE (--help)")
    try:
        per_device = int(sys.argv[3])
    except ValueError:
        per_device = 0
    if per_device < 1:
        fail("RANKS_PER_DEVICE: '%s' is not a whole number of at least 1" % sys.argv[3])
    meas, meas_spans = load(sys.argv[1], per_device)
    model, model_spans = load(sys.argv[2], per_device)
    chans = len(meas_spans)
    print("%-12s %8s %12s %12s %16s" % ("op", "per chan", "measured ns", "model ns", "model - meas us"))
    total = 0.0
    for k in sorted(set(meas) | set(model)):
        m = sum(meas[k]) / len(meas[k]) if meas[k] else 0.0
        s = sum(model[k]) / len(model[k]) if model[k] else 0.0
        per_chan = len(meas[k]) / chans
        total += (s - m) * per_chan
        print("%-12s %8.1f %12.0f %12.0f %16.2f" % (k, per_chan, m, s, (s - m) * per_chan / 1e3))
    longest = lambda sp: max(b - a for a, b in sp.values()) / 1e3
    print("longest channel: measured %.2f us, model %.2f us; differences add up to %.2f us per channel"
          % (longest(meas_spans), longest(model_spans), total / 1e3))


if __name__ == "__main__":
    main()
