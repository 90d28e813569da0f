#!/usr/bin/env python3
"""contourpy peer for the `squares` benchmarks (bench/benches/squares.rs).

Same workload as the Rust side: a 2048 x 2048 grid, x, y in linspace(0, S, 2048),
z = sin x + sin y + 0.3 sin(0.7 x + 1.3 y + 0.5), computed in float64 and rounded
to float32 (the values isoterra meshes), contoured at level 0.0.
"sparse" is S = 16 pi, "dense" is S = 128 pi.

Times `ContourGenerator.lines(0.0)` (the generator is built once, like a reused
Rust tracer) and prints one JSON object per line:
{"group": "squares", "name": ..., "unit": "ms", "value": median, ...}.

`--n 8192` contours an 8192 x 8192 grid with S scaled by n / 2048 (the same
contours per cell); `--save-npy DIR` also writes each field as a float32
`.npy` (`DIR/{sparse,dense}_{n}.npy`) for `isoterra contour --npy`.
"""

import argparse
import json
import os
import math
import platform
import statistics
import sys
import time

import contourpy
import numpy as np

N = 2048
RUNS = 20
WORKLOADS = [("sparse", 16.0 * math.pi), ("dense", 128.0 * math.pi)]
LINE_TYPES = ["Separate", "ChunkCombinedOffset"]


def sine_field(n, s):
    x = np.linspace(0.0, s, n)
    y = np.linspace(0.0, s, n)
    xx, yy = np.meshgrid(x, y)  # rows are y, columns are x (x fastest)
    z = np.sin(xx) + np.sin(yy) + 0.3 * np.sin(0.7 * xx + 1.3 * yy + 0.5)
    return x, y, z.astype(np.float32).astype(np.float64)


def count(lines, line_type):
    if line_type == "Separate":
        return len(lines), sum(len(p) for p in lines)
    # ChunkCombinedOffset: (points per chunk, offsets per chunk)
    points, offsets = lines
    n_lines = sum(len(o) - 1 for o in offsets if o is not None)
    n_points = sum(len(p) for p in points if p is not None)
    return n_lines, n_points


def main():
    global N, RUNS
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=N, help="nodes per side (default 2048)")
    ap.add_argument("--runs", type=int, default=RUNS, help="timed runs (median)")
    ap.add_argument("--save-npy", default=None, help="folder to write the fields to")
    args = ap.parse_args()
    scale = args.n / N
    N, RUNS = args.n, args.runs
    for name, s in WORKLOADS:
        x, y, z = sine_field(N, s * scale)
        if args.save_npy:
            np.save(os.path.join(args.save_npy, f"{name}_{N}.npy"), z.astype(np.float32))
        for line_type in LINE_TYPES:
            gen = contourpy.contour_generator(x, y, z, name="serial", line_type=line_type)
            lines = gen.lines(0.0)
            n_lines, n_points = count(lines, line_type)
            times = []
            for _ in range(RUNS):
                t0 = time.perf_counter()
                gen.lines(0.0)
                times.append((time.perf_counter() - t0) * 1e3)
            print(
                json.dumps(
                    {
                        "group": "squares",
                        "name": f"contourpy_serial_{line_type}/{name}_{N}",
                        "unit": "ms",
                        "value": round(statistics.median(times), 3),
                        "min": round(min(times), 3),
                        "runs": RUNS,
                        "lines": n_lines,
                        "points": n_points,
                        "contourpy": contourpy.__version__,
                        "numpy": np.__version__,
                        "python": platform.python_version(),
                    }
                ),
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
