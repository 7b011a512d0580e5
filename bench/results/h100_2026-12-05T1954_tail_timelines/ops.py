#!/usr/bin/env python3
"""Per-op device times of the timelines in timelines.tgz (arsim run --timeline), odd count beside
aligned: mean and max duration of each op kind over every rank's channel, and the span."""
import collections, csv, io, sys, tarfile

tar = tarfile.open(sys.argv[1] if len(sys.argv) > 1 else "timelines.tgz")
files = {m.name.split("/")[-1][:-4]: m for m in tar.getmembers() if m.name.endswith(".csv")}
for name in sorted(files):
    rows = list(csv.DictReader(io.TextIOWrapper(tar.extractfile(files[name]))))
    t0 = min(int(r["start_ns"]) for r in rows)
    t1 = max(int(r["end_ns"]) for r in rows)
    by = collections.defaultdict(list)
    for r in rows:
        by[r["code"]].append(int(r["end_ns"]) - int(r["start_ns"]))
    ops = "  ".join(f"{k} {len(v)} x {sum(v) / len(v) / 1000:.2f} us (max {max(v) / 1000:.2f})" for k, v in sorted(by.items()))
    print(f"{name:22s} span {(t1 - t0) / 1000:6.2f} us  {ops}")
