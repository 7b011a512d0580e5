#!/usr/bin/env python3
"""Predicted against measured for `arsim bench --op matmul-allreduce|allgather-matmul` rows.

    scripts/fused-vs-model.py DIR MODEL [TOPOLOGY [RANKS]]

For every row of DIR/bench_*.csv (written by scripts/gpu-fused-bench.sh), predicts the same
plan (algorithm, channels, chunk and partitions of the row; TOPOLOGY default full:2, RANKS
placed on it as `--ranks` does, default one a device) with the analytic backend on MODEL, and
prints measured, predicted, the error and the speedup over cuBLASLt + ncclAllReduce (where
NCCL ran: one rank a GPU); then the median and largest |error|. ARSIM names the binary
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
    ranks = ["--ranks", sys.argv[4]] if len(sys.argv) > 4 else []
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
                   "--channels", chans, "--chunk", r["chunk_bytes"], "--csv", "-", "-q"] + ranks
            out = subprocess.run(cmd, capture_output=True, text=True)
            rows = list(csv.DictReader(out.stdout.splitlines()))
            if not rows:
                sys.exit("fused-vs-model: %s: %s" % (" ".join(cmd), out.stderr.strip()))
            meas, pred = float(r["time_us"]), float(rows[0]["time_us"])
            unfused = float(r["nccl_time_us"]) if r.get("nccl_time_us") else None
            errs.append(abs(pred / meas - 1))
            if unfused: speedups.append(unfused / meas)
            print("%-20s %-18s measured %9.1f us  predicted %9.1f us  error %+6.1f%%%s" %
                  (r["gemm"], r["algo"], meas, pred, 100 * (pred / meas - 1),
                   "  vs unfused %.3fx" % (unfused / meas) if unfused else ""))
    if not errs:
        sys.exit("fused-vs-model: no rows in %s/bench_*.csv" % d)
    errs.sort()
    print("model %s: median |error| %.1f%%, max %.1f%% over %d rows%s" %
          (model, 100 * errs[len(errs) // 2], 100 * errs[-1], len(errs),
           "; fused vs unfused %.3fx .. %.3fx" % (min(speedups), max(speedups)) if speedups else ""))


if __name__ == "__main__":
    main()
