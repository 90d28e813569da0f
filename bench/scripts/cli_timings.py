#!/usr/bin/env python3
"""Whole `isoterra mesh3d` / `isoterra contour` runs of two or more builds,
alternated, one fresh process each: what a user waits for, phase by phase.

Each round runs every build once per case and thread count (the order
reverses every round, so that no build always follows the same one), with
`--timings`, and prints the medians of the process's wall time and of the
phases the command reports (`load_ms`, `mesh_ms` or `contour_ms`,
`write_ms`, which includes the final `fsync`), and whether the builds wrote
the same bytes.

    bench/scripts/cli_timings.py --build before=/path/to/old/isoterra \\
        --build after=target/release/isoterra \\
        --case mesh3d:gyroid_16_256.npy:ply --case contour:dense_8192.npy:json \\
        --threads 1 2 --rounds 5
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", action="append", required=True, help="NAME=PATH of an isoterra binary")
    ap.add_argument("--case", action="append", required=True, help="COMMAND:NPY:FORMAT (mesh3d or contour)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out-dir", default=None, help="where the outputs go (default: a temporary folder)")
    a = ap.parse_args()
    builds = [b.split("=", 1) for b in a.build]
    out_dir = a.out_dir or tempfile.mkdtemp(prefix="isoterra-timings-")
    os.makedirs(out_dir, exist_ok=True)
    for case in a.case:
        cmd, npy, fmt = case.split(":")
        for threads in a.threads:
            runs = {name: [] for name, _ in builds}
            for r in range(a.rounds):
                order = builds if r % 2 == 0 else builds[::-1]
                for name, path in order:
                    out = os.path.join(out_dir, f"{name}.{fmt}")
                    args = [path, cmd, "--npy", npy, "--iso", "0", "--format", fmt,
                            "-o", out, "--threads", str(threads), "--timings"]
                    t = time.perf_counter()
                    p = subprocess.run(args, capture_output=True, text=True)
                    wall = (time.perf_counter() - t) * 1e3
                    if p.returncode != 0:
                        print(p.stderr, file=sys.stderr)
                        return 1
                    d = json.loads(p.stderr.strip().splitlines()[-1])
                    work = d.get("mesh_ms", d.get("contour_ms"))
                    runs[name].append((wall, d["load_ms"], work, d["write_ms"]))
            outputs = {open(os.path.join(out_dir, f"{n}.{fmt}"), "rb").read() for n, _ in builds}
            print(json.dumps({
                "case": case, "threads": threads, "rounds": a.rounds,
                "same_bytes": len(outputs) == 1,
                "median_ms": {
                    name: dict(zip(["wall", "load", "work", "write"],
                                   [round(statistics.median(x[k] for x in runs[name]), 1) for k in range(4)]))
                    for name, _ in builds
                },
            }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
