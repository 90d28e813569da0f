#!/usr/bin/env python3
"""One-shot and warm dense contours, isoterra and contourpy in turn.

Each round runs the `contour_one_shot` example (isoterra's one-shot and warm
`ContourTracer` calls on the dense 2048^2 field, thread CPU time) and then
contourpy's serial `lines(0.0)` (`line_type="Separate"`, the generator built
once) on the same values in this process, timed with `time.thread_time()`
beside wall time. Ratios are taken within a round, so a host whose speed
drifts moves both sides. Prints one JSON line per round and a summary:

    cargo build --release -p isoterra-bench --example contour_one_shot
    bench/peers/.venv/bin/python bench/peers/contour_alternate.py [--rounds 10] [--reps 15]
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import contourpy
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "target", "release", "examples", "contour_one_shot")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--reps", type=int, default=15, help="calls per side per round")
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--example", default=EXAMPLE, help="the contour_one_shot binary")
    args = ap.parse_args()

    s = 128.0 * math.pi * args.n / 2048
    x = np.linspace(0.0, s, args.n)
    y = np.linspace(0.0, s, args.n)
    xx, yy = np.meshgrid(x, y)
    z = np.sin(xx) + np.sin(yy) + 0.3 * np.sin(0.7 * xx + 1.3 * yy + 0.5)
    z = z.astype(np.float32).astype(np.float64)
    gen = contourpy.contour_generator(x, y, z, name="serial", line_type="Separate")
    lines = gen.lines(0.0)

    ratios = {"one_shot_min": [], "one_shot_median": [], "warm_min": [], "warm_median": []}
    for r in range(args.rounds):
        run = subprocess.run(
            [args.example, str(args.reps), str(args.n)], capture_output=True, text=True, check=True
        )
        ours = json.loads(run.stdout.strip().splitlines()[-1])
        if ours["polylines"] != len(lines):
            sys.exit(f"polylines differ: isoterra {ours['polylines']}, contourpy {len(lines)}")
        cpu, wall = [], []
        for _ in range(args.reps):
            t0, w0 = time.thread_time(), time.perf_counter()
            gen.lines(0.0)
            cpu.append((time.thread_time() - t0) * 1e3)
            wall.append((time.perf_counter() - w0) * 1e3)
        peer = {
            "contourpy_cpu_ms_min": round(min(cpu), 3),
            "contourpy_cpu_ms": round(statistics.median(cpu), 3),
            "contourpy_wall_ms": round(statistics.median(wall), 3),
        }
        row = {"round": r, **ours, **peer}
        for side in ("one_shot", "warm"):
            row[f"{side}_ratio_min"] = round(peer["contourpy_cpu_ms_min"] / ours[f"{side}_cpu_ms_min"], 2)
            row[f"{side}_ratio"] = round(peer["contourpy_cpu_ms"] / ours[f"{side}_cpu_ms"], 2)
            ratios[f"{side}_min"].append(row[f"{side}_ratio_min"])
            ratios[f"{side}_median"].append(row[f"{side}_ratio"])
        print(json.dumps(row), flush=True)
    summary = {
        k: {"lowest": min(v), "median": statistics.median(v), "rounds_at_4x": sum(x >= 4.0 for x in v)}
        for k, v in ratios.items()
    }
    print(json.dumps({"summary": summary, "rounds": args.rounds}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
