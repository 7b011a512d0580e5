#!/usr/bin/env python3
"""No backend beats the physical bound: random topologies, algorithms, sizes, channels
(1-128) and chunks, on the analytic and sim backends (and ref's plans run by both); every
row must have efficiency (bound / time) <= 1.001. The cases come from a fixed seed
(ARSIM_PROPERTY_SEED to change it) so a failure repeats; each failure names its command.
Run by `make check`."""
import csv
import io
import os
import random
import subprocess
import sys

BIN = os.environ.get("ARSIM", "./arsim")
SEED = int(os.environ.get("ARSIM_PROPERTY_SEED", "20261125"))
CASES = int(os.environ.get("ARSIM_PROPERTY_CASES", "120"))
# Three of these a case (every algorithm runs on every topology: the plans of all of them at
# once on 48 ranks take minutes in sim); innet needs a switch that adds.
ALGOS = ["ring", "torus2d", "mesh2d", "1stage", "2stage", "center_root", "naive"]
# A case over this many seconds is reported and left out (a plan of a million ops, not a
# bound broken); more than a tenth of them so is a failure.
CASE_TIMEOUT = 120


def backends():
    out = subprocess.run([BIN, "list", "backends"], capture_output=True, text=True).stdout
    have = [l.split()[0] for l in out.splitlines() if l and not l.startswith("#") and l.split()[1] == "yes"]
    return [b for b in ("analytic", "sim") if b in have]


def topology(rng):
    kind = rng.choice(["ring_1d", "torus_2d", "mesh_2d", "full", "switch", "shipped"])
    if kind == "ring_1d":
        return "ring_1d:%d" % rng.randint(2, 12)
    if kind in ("torus_2d", "mesh_2d"):
        return "%s:%dx%d" % (kind, rng.randint(2, 5), rng.randint(2, 4))
    if kind in ("full", "switch"):
        return "%s:%d" % (kind, rng.randint(2, 8))
    return rng.choice(["hgx_h100_8", "h200_pair", "torus_2d_4x4", "mesh_2d_2x3", "ring_1d_6"])


def case(rng, backend):
    size = rng.choice([8 << 10, 64 << 10, 1 << 20, 4 << 20, 16 << 20]) + 16 * rng.randint(0, 64)
    if backend == "analytic" and rng.random() < 0.3:
        size = 64 << 20
    algos = ",".join(rng.sample(ALGOS, 3))
    args = ["run", "--backend", backend, "--topology", topology(rng), "--algo", algos, "--size", str(size),
            "--channels", str(rng.choice([1, 2, 3, 8, 16, 32, 64, 128, rng.randint(1, 128)])),
            "--buffer", rng.choice(["hbm", "hbm", "sram"]), "-q", "--csv", "-"]
    if rng.random() < 0.5:  # a chunk of at least 1/256 of the size: plans stay small (1stage on 16
        # ranks routed over a torus, 56 channels and 1/2048: a million ops, a minute in sim)
        args += ["--chunk", str(max(16, size // rng.choice([4, 16, 64, 256])) // 16 * 16)]
    if rng.random() < 0.2:
        args += ["--model", rng.choice(["accel_tcm", "h100_sxm", "h200_sxm"])]
    spec = args[args.index("--topology") + 1]
    if ":" in spec and rng.random() < 0.25:  # several ranks a device: memory shared
        dims = [int(x) for x in spec.split(":")[1].split("x")]
        ndev = dims[0] * (dims[1] if len(dims) > 1 else 1)
        args += ["--ranks", str(ndev * rng.choice([2, 4]))]
    return args


def main():
    rng = random.Random(SEED)
    bes = backends()
    if not bes:
        print("bound_property: skipped (no timing backend)")
        return 77
    rows = bad = slow = 0
    worst = (0.0, None)
    for i in range(CASES):
        args = case(rng, bes[i % len(bes)])
        try:
            p = subprocess.run([BIN] + args, capture_output=True, text=True, timeout=CASE_TIMEOUT)
        except subprocess.TimeoutExpired:
            print("bound_property: over %d s, left out: arsim %s" % (CASE_TIMEOUT, " ".join(args)))
            slow += 1
            continue
        if p.returncode not in (0, 2):
            print("bound_property: FAIL: arsim %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr[-300:]))
            bad += 1
            continue
        for r in csv.DictReader(io.StringIO(p.stdout)):
            rows += 1
            e = float(r["efficiency"]) if r["efficiency"] else 0.0
            if e > worst[0]:
                worst = (e, "%s %s %s ch %s" % (r["backend"], r["topology"], r["algo"], r["channels"]))
            if e > 1.001:
                bad += 1
                print("bound_property: FAIL: %s on %s, %s bytes, %s channels, chunk %s: time %s us, bound %s us "
                      "(efficiency %.4f): arsim %s" % (r["algo"], r["topology"], r["bytes"], r["channels"],
                                                       r["chunk_bytes"], r["time_us"], r["bound_us"], e,
                                                       " ".join(args)))
    print("bound_property: %d cases, %d rows, %s, highest efficiency %.4f (%s)" %
          (CASES, rows, "%d beat the bound" % bad if bad else "none beats the bound", worst[0], worst[1]))
    if rows < CASES:
        print("bound_property: FAIL: only %d rows from %d cases" % (rows, CASES))
        return 1
    if slow > CASES // 10:
        print("bound_property: FAIL: %d of %d cases over %d s" % (slow, CASES, CASE_TIMEOUT))
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
