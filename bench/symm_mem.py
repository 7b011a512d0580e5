#!/usr/bin/env python3
"""PyTorch's symmetric-memory allreduces beside NCCL, for comparing with `arsim bench`.

On every GPU of this machine (one process each), bf16 sum allreduce at each size:
  nccl       torch.distributed.all_reduce (NCCL)
  one_shot   torch.ops.symm_mem.one_shot_all_reduce (every rank loads every peer's buffer)
  two_shot   torch.ops.symm_mem.two_shot_all_reduce_ (reduce-scatter, then all-gather)
each captured N times in one CUDA graph, the graph replayed and timed with CUDA events (the
median of the replays, the slowest rank's), as `arsim bench` times its own. Each op's result
is checked once against the exact sum before it is timed. Writes CSV rows (op, bytes, count,
time_us, algbw_gbps, busbw_gbps, check) to --csv or standard output.

NVLink multicast stays off (TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NCCL_NVLS_ENABLE=0): the
multimem ops are never called. Exits 77 where torch, CUDA or two GPUs are missing.

    python3 bench/symm_mem.py --size 8K:1G --csv symm_mem.csv
"""
import argparse
import os
import socket
import statistics
import sys

os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"
os.environ["NCCL_NVLS_ENABLE"] = "0"


def parse_bytes(s):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    s = s.strip().upper()
    return int(s[:-1]) * mult[s[-1]] if s[-1] in mult else int(s)


def sizes_of(spec):
    out = []
    for part in spec.split(","):
        if ":" in part:
            a, b = (parse_bytes(x) for x in part.split(":"))
            while a <= b:
                out.append(a)
                a *= 2
        else:
            out.append(parse_bytes(part))
    return out


def reps_for(nbytes):
    """Ops per graph and graph replays: about the same wall time at every size."""
    if nbytes <= 1 << 20:
        return 50, 20
    if nbytes <= 64 << 20:
        return 10, 10
    return 3, 5


def worker(rank, world, port, args, q):
    import torch
    import torch.distributed as dist
    import torch.distributed._symmetric_memory as symm_mem

    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % port, rank=rank, world_size=world,
                            device_id=dev)
    group = dist.group.WORLD.group_name
    sizes = sizes_of(args.size)
    most = max(sizes) // 2
    buf = symm_mem.empty(most, dtype=torch.bfloat16, device=dev)
    symm_mem.rendezvous(buf, group)
    plain = torch.empty(most, dtype=torch.bfloat16, device=dev)
    ops = {
        "nccl": lambda t: dist.all_reduce(t),
        "one_shot": lambda t: torch.ops.symm_mem.one_shot_all_reduce(t, "sum", group),
        "two_shot": lambda t: torch.ops.symm_mem.two_shot_all_reduce_(t, "sum", group),
    }
    rows = []
    for nbytes in sizes:
        n = nbytes // 2
        for name, op in ops.items():
            t = (plain if name == "nccl" else buf)[:n]
            check, us = "ok", float("nan")
            try:
                # small integers: every partial sum is exact in bf16
                t.fill_(rank + 1)
                out = op(t)
                got = (out if out is not None and name == "one_shot" else t).float()
                want = world * (world + 1) / 2
                torch.cuda.synchronize()
                if not bool(torch.all(got == want)):
                    check = "FAIL"
                per, replays = reps_for(nbytes)
                g = torch.cuda.CUDAGraph()
                s = torch.cuda.Stream()
                s.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(s):
                    op(t)  # warm on the capture stream
                torch.cuda.current_stream().wait_stream(s)
                dist.barrier()
                with torch.cuda.graph(g):
                    for _ in range(per):
                        op(t)
                g.replay()
                torch.cuda.synchronize()
                times = []
                for _ in range(replays):
                    dist.barrier()
                    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    a.record()
                    g.replay()
                    b.record()
                    b.synchronize()
                    times.append(a.elapsed_time(b) * 1e3 / per)
                us = statistics.median(times)
                del g
            except Exception as e:  # an op this torch does not have, or a size it refuses
                check = "error: " + str(e).splitlines()[0][:80].replace(",", ";")
            worst = torch.tensor([us if us == us else -1.0], device=dev, dtype=torch.float64)
            dist.all_reduce(worst, op=dist.ReduceOp.MAX)
            us = worst.item()
            if rank == 0:
                ok = us > 0
                algbw = nbytes / (us * 1e-6) / 1e9 if ok else float("nan")
                rows.append("%s,%d,%d,%s,%s,%s,%s" % (
                    name, nbytes, n, "%.2f" % us if ok else "", "%.2f" % algbw if ok else "",
                    "%.2f" % (algbw * 2 * (world - 1) / world) if ok else "", check))
    if rank == 0:
        q.put(rows)
    dist.barrier()
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="8K:1G", help="bytes per rank: A:B doubles, or a list (default 8K:1G)")
    ap.add_argument("--csv", default="-", help="output CSV (default: standard output)")
    args = ap.parse_args()
    try:
        sizes = sizes_of(args.size)
    except (ValueError, KeyError):
        print("symm_mem.py: --size %s: not bytes (8K, 1M:1G, ...)" % args.size, file=sys.stderr)
        return 2
    if not sizes or min(sizes) < 2 or any(s % 2 for s in sizes):
        print("symm_mem.py: --size %s: each size an even number of bytes (bf16)" % args.size, file=sys.stderr)
        return 2
    try:
        import torch
        import torch.multiprocessing as mp
        import torch.distributed._symmetric_memory  # noqa: F401
    except ImportError as e:
        print("symm_mem.py: skipped: %s" % e, file=sys.stderr)
        return 77
    world = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if world < 2:
        print("symm_mem.py: skipped: %d GPU(s), needs 2 or more" % world, file=sys.stderr)
        return 77
    with socket.socket() as sk:
        sk.bind(("127.0.0.1", 0))
        port = sk.getsockname()[1]
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, world, port, args, q)) for r in range(world)]
    for p in procs:
        p.start()
    import queue
    try:
        rows = q.get(timeout=1800)
    except queue.Empty:
        rows = None
    for p in procs:
        p.join(timeout=60)
    if rows is None or any(p.exitcode != 0 for p in procs):
        print("symm_mem.py: a rank failed (exit codes %s)" % [p.exitcode for p in procs], file=sys.stderr)
        for p in procs:
            if p.is_alive():
                p.kill()
        return 1
    text = "op,bytes,count,time_us,algbw_gbps,busbw_gbps,check\n" + "".join(r + "\n" for r in rows)
    if args.csv == "-":
        sys.stdout.write(text)
    else:
        with open(args.csv, "w") as f:
            f.write(text)
    return 1 if any(r.endswith(",FAIL") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
