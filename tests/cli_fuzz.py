#!/usr/bin/env python3
"""Random command lines against arsim: every run must end with exit status 0, 1 or 2,
never a signal or a hang, and a run that exits 0 must leave only well-formed output
(every CSV row as many fields as its header, JSON that parses).

    tests/cli_fuzz.py [--seconds S] [--seed N] [--arsim PATH]

`make check` runs it for ARSIM_FUZZ_SECONDS (default 60); `make fuzz-cli` longer.
A failing command line is printed whole, to be replayed by hand.
"""
import argparse
import csv
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

COMMANDS = ["run", "sweep", "merge", "topo", "list", "model", "bound", ""]
TOPOS = ["ring_1d:4", "torus_2d:2x3", "mesh_2d:3x3", "full:4", "switch:3", "torus_2d_4x4", "h200_pair",
         "hgx_h100_8", "ring_1d:0", "torus_2d:0x3", "bogus", "full:99999", "ring_1d:-2", ""]
SIZES = ["8K", "1M", "8K:64K", "1", "3", "0", "-1", "1T", "1KB", " 8K", "8K:4K", "1e3", "99999999999999999999",
         "16K,32K", "8K,,16K", ""]
VALUES = {
    "--backend": ["analytic", "ref", "sim", "cuda", "nope", ""],
    "--topology": TOPOS,
    "--model": ["accel_tcm", "h200_sxm", "h100_sxm", "nope.yaml", "/dev/null", ""],
    "--algo": ["ring", "torus2d", "mesh2d", "1stage", "2stage", "center_root", "naive", "all", "auto",
               "x-chain4", "x-chain99", "ring,ring", "nope", ""],
    "--size": SIZES[:-1],
    "--count": ["1", "1001", "0", "-5", "3x", "65537", ""],
    "--dtype": ["bf16", "fp16", "fp32", "bf16,fp32", "fp64", "bf16,bf16", ""],
    "--buffer": ["hbm", "sram", "tcm", "l3", "hbm,sram", ""],
    "--channels": ["1", "2", "8", "0", "1000", "-1", " 4", "4x", "1,2", ""],
    "--chunk": ["64K", "16", "1", "1T", "0", "1KB", ""],
    "--ranks": ["2", "8", "16", "3", "0", "65536", "-4", ""],
    "--root": ["0", "1", "-1", "99", "x", "all", "0,1", "1,1", ""],
    "--iters": ["1", "2", "0", "-1", ""],
    "--seed": ["1", "42", "-3", "x", ""],
    "--jobs": ["1", "2", "0", "5000", ""],
    "--shard": ["0/2", "1/2", "2/2", "x", "1/0", ""],
    "--time-limit": ["1", "0", "x"],
}
# The smallest chunk only on the smallest sizes: 1 MB in 16-byte chunks is honest work of
# minutes on two cores (a 1stage plan of 1.5 M ops routed over the torus; every algorithm,
# two dtypes), the sanitizer build 5-10x that: long, not a fault to find.
TINY_CHUNK = "16"
SMALL_SIZES = {"8K", "1", "3", "0", "-1", "1T", "1KB", " 8K", "8K:4K", "1e3", "99999999999999999999"}
FLAGS = list(VALUES) + ["--check", "--breakdown", "--verify", "--no-verify", "-q", "--quiet", "--resume", "--help",
                        "--bogus"]
FILE_FLAGS = ["--csv", "--json", "--out", "-o"]


def command_line(rng, work):
    cmd = rng.choice(COMMANDS)
    args = [cmd] if cmd else []
    if cmd == "topo":
        return args + [rng.choice(["show", "check", "nope"]), rng.choice(TOPOS)], []
    if cmd == "list":
        return args + [rng.choice(["algos", "probes", "topologies", "models", "backends", "nope"])], []
    if cmd == "model":
        return args + rng.choice([["keys"], ["keys", "--markdown"], ["show", "accel_tcm"], ["show", "nope"], []]), []
    if cmd == "bound":
        extra = []
        for _ in range(rng.randrange(0, 4)):
            f = rng.choice(["--topology", "--model", "--size", "--count", "--dtype", "--buffer", "--ranks", "--algo"])
            extra += [f, rng.choice(VALUES[f])]
        return args + extra, []
    if cmd == "merge":
        files = [os.path.join(work, f) for f in os.listdir(work) if f.endswith(".csv")][:3]
        out = os.path.join(work, "merged%d.csv" % rng.randrange(3))
        return args + files + ["-o", rng.choice([out, "-q", ""])], [out]
    outputs = []
    args += ["--backend", rng.choice(["analytic", "analytic", "ref", "sim", "nope"])]
    # always a size: the default study's 8K..1G is long work, not a fault to find
    size = rng.choice(SIZES[:4] + SIZES[4:] + ["--count"])
    args += ["--size", size]
    for _ in range(rng.randrange(0, 5)):
        f = rng.choice(FLAGS)
        args.append(f)
        if f in VALUES:
            values = VALUES[f]
            if f == "--chunk" and size not in SMALL_SIZES:
                values = [x for x in values if x != TINY_CHUNK]
            args.append(rng.choice(values))
    if cmd == "sweep" or rng.random() < 0.4:
        name = os.path.join(work, "o%d.csv" % rng.randrange(4))
        flag = "--out" if cmd == "sweep" else "--csv"
        args += [flag, rng.choice([name, name, "-", "-q", ""])]
        outputs.append(name)
    if rng.random() < 0.3:
        name = os.path.join(work, "o%d.json" % rng.randrange(2))
        args += ["--json", rng.choice([name, name, "-"])]
        outputs.append(name)
    return args, outputs


def well_formed(path):
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return None
    with open(path, newline="") as f:
        if path.endswith(".json"):
            json.load(f)
            return None
        rows = [r for r in csv.reader(line for line in f if not line.startswith("#"))]
    if rows and any(len(r) != len(rows[0]) for r in rows):
        return "a CSV row with another field count than its header"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=float(os.environ.get("ARSIM_FUZZ_SECONDS", 60)))
    ap.add_argument("--seed", type=int, default=int(os.environ.get("ARSIM_FUZZ_SEED", time.time())))
    ap.add_argument("--arsim", default=os.environ.get("ARSIM", "./arsim"))
    a = ap.parse_args()
    arsim = os.path.abspath(a.arsim)
    if not os.access(arsim, os.X_OK):
        print("cli_fuzz: no %s" % arsim, file=sys.stderr)
        return 99
    rng = random.Random(a.seed)
    # a hang is a command still running after 120 s: the longest honest work these
    # values ask for (a sim sweep of every algorithm, bf16 and fp32, verified: 1 MB in
    # 1 KB chunks, or 8 KB in 16-byte chunks) takes under 30 s on two cores; the
    # sanitizer build, 5-10x slower, scales Check's timeouts and this one alike
    hang_s = 120 * float(os.environ.get("CK_TIMEOUT_MULTIPLIER", 1))
    work = tempfile.mkdtemp(prefix="arsim-cli-fuzz-")
    t0, n, bad = time.time(), 0, 0
    try:
        while time.time() - t0 < a.seconds and bad < 5:
            args, outputs = command_line(rng, work)
            n += 1
            try:
                p = subprocess.run([arsim] + args, cwd=work, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, timeout=hang_s)
            except subprocess.TimeoutExpired:
                print("cli_fuzz: FAIL: a hang (%.0f s): arsim %s" % (hang_s, " ".join(repr(x) for x in args)), file=sys.stderr)
                bad += 1
                continue
            why = None
            if p.returncode < 0:
                why = "killed by signal %d" % -p.returncode
            elif p.returncode not in (0, 1, 2):
                why = "exit status %d" % p.returncode
            elif p.returncode == 0:
                for o in outputs:
                    try:
                        why = why or well_formed(o)
                    except (ValueError, csv.Error) as e:
                        why = "%s is not well formed: %s" % (o, e)
                if os.path.exists(os.path.join(work, "-q")):
                    why = "a file named -q"
            if why:
                print("cli_fuzz: FAIL: %s: arsim %s\n%s" % (why, " ".join(repr(x) for x in args),
                                                           p.stderr.decode(errors="replace")[-400:]), file=sys.stderr)
                bad += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("cli_fuzz: %d command lines in %.0f s (seed %d), %d failures" % (n, time.time() - t0, a.seed, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
