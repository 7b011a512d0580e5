#!/usr/bin/env python3
"""Predicted against measured for `arsim bench --op matmul-allreduce|allgather-matmul` rows.

    scripts/fused-vs-model.py DIR MODEL [TOPOLOGY]

For every row of DIR/bench_*.csv (written by scripts/gpu-fused-bench.sh), predicts the same
plan (algorithm, channels, chunk and partitions of the row; TOPOLOGY default full:2) with the
analytic backend on MODEL, and prints measured, predicted, the error and the speedup over
cuBLASLt + ncclAllReduce; then the median and largest |error|. ARSIM names the binary
(default ./arsim)."""
import csv
import glob
import os
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    d, model = sys.argv[1], sys.argv[2]
    topo = sys.argv[3] if len(sys.argv) > 3 else "full:2"
    arsim = os.environ.get("ARSIM", "./arsim")
    errs, speedups = [], []
    for f in sorted(glob.glob(os.path.join(d, "bench_*.csv"))):
        for r in csv.DictReader(open(f)):
            mnk, parts = r["gemm"].split("/")
            m, n, k = mnk.split("x")
            label = r["algo"].split(":")[-1]  # auto:NAME/C, NAME/C or NAME
            algo, chans = label.split("/") if "/" in label else (label, r["channels"])
            cmd = [arsim, "run", "--backend", "analytic", "--model", model, "--topology", topo, "--op",
                   r.get("op") or "matmul-allreduce", "--m", m, "--n", n, "--k", k, "--algo", algo, "--partitions", parts,
                   "--channels", chans, "--chunk", r["chunk_bytes"], "--csv", "-", "-q"]
            out = subprocess.run(cmd, capture_output=True, text=True)
            rows = list(csv.DictReader(out.stdout.splitlines()))
            if not rows:
                sys.exit("fused-vs-model: %s: %s" % (" ".join(cmd), out.stderr.strip()))
            meas, pred = float(r["time_us"]), float(rows[0]["time_us"])
            unfused = float(r["nccl_time_us"])
            errs.append(abs(pred / meas - 1))
            speedups.append(unfused / meas)
            print("%-20s %-18s measured %9.1f us  predicted %9.1f us  error %+6.1f%%  vs unfused %.3fx" %
                  (r["gemm"], r["algo"], meas, pred, 100 * (pred / meas - 1), unfused / meas))
    if not errs:
        sys.exit("fused-vs-model: no rows in %s/bench_*.csv" % d)
    errs.sort()
    print("model %s: median |error| %.1f%%, max %.1f%% over %d rows; fused vs unfused %.3fx .. %.3fx" %
          (model, 100 * errs[len(errs) // 2], 100 * errs[-1], len(errs), min(speedups), max(speedups)))


if __name__ == "__main__":
    main()
