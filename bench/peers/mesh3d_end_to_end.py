#!/usr/bin/env python3
"""What a user waits for: whole `isoterra mesh3d` runs next to VTK's.

Runs each contender as a fresh process, `--runs` times, rotating their order
every round so that none always follows another (a process that frees
gigabytes slows the next one's first page faults on a virtual machine), and
prints the median (min-max) of each phase and of the whole process's wall
time, as a shell sees it:

    isoterra mesh3d --npy V.npy --iso 0 --format ply -o OUT --threads T --timings
    PYTHON bench/peers/cubes_memory.py V.npy OUT       (numpy + VTK, one thread)

`--before PATH` adds an older `isoterra` binary (its `--timings` may lack
`check_ms`). Volumes are `.npy` files such as `cubes_peers.py --save-npy`
writes. Example:

    bench/peers/mesh3d_end_to_end.py --isoterra target/release/isoterra \\
        --python /tmp/peers-venv/bin/python --runs 5 \\
        /tmp/vol3/sphere_noise_256.npy /tmp/vol3/gyroid_8_128.npy
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

PHASES = ("load", "mesh", "check", "write", "wall")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("volumes", nargs="+", help=".npy volumes")
    ap.add_argument("--isoterra", default="target/release/isoterra")
    ap.add_argument("--before", help="an older isoterra binary to run beside it")
    ap.add_argument("--python", help="a Python with numpy and vtk, for cubes_memory.py (left out: no VTK)")
    ap.add_argument("--threads", default="1,2", help="isoterra thread counts, comma separated")
    ap.add_argument("--format", default="ply", choices=["ply", "obj", "glb"])
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()

    here = os.path.dirname(os.path.abspath(__file__))
    contenders = []
    for t in [int(x) for x in a.threads.split(",")]:
        if a.before:
            contenders.append((f"before, {t} thread(s)", a.before, t))
        contenders.append((f"now, {t} thread(s)", a.isoterra, t))
    if a.python and a.format == "ply":
        contenders.append(("VTK, 1 thread", None, 1))

    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, f"out.{a.format}")
        for r in range(a.runs):
            for vol in a.volumes:
                k = r % len(contenders)
                for name, exe, t in contenders[k:] + contenders[:k]:
                    if exe is None:
                        cmd = [a.python, os.path.join(here, "cubes_memory.py"), vol, out]
                    else:
                        cmd = [exe, "mesh3d", "--npy", vol, "--iso", "0", "--format", a.format,
                               "-o", out, "--threads", str(t), "--timings"]
                    t0 = time.perf_counter()
                    p = subprocess.run(cmd, capture_output=True, text=True)
                    wall = (time.perf_counter() - t0) * 1e3
                    if p.returncode != 0:
                        sys.exit(f"{' '.join(cmd)} failed:\n{p.stderr}")
                    text = p.stdout if exe is None else p.stderr
                    d = json.loads(text.strip().splitlines()[-1])
                    row = res.setdefault((vol, name), {k: [] for k in PHASES})
                    for ph in PHASES[:-1]:
                        row[ph].append(d.get(f"{ph}_ms", math.nan))
                    row["wall"].append(wall)

    print("| volume | run | " + " | ".join(PHASES) + " |")
    print("|---|---|" + "---:|" * len(PHASES))
    for vol in a.volumes:
        for name, _, _ in contenders:
            row = res[(vol, name)]
            cells = []
            for ph in PHASES:
                v = row[ph]
                if any(math.isnan(x) for x in v):
                    cells.append("–")
                else:
                    cells.append(f"{statistics.median(v):.1f} ({min(v):.1f}–{max(v):.1f})")
            print(f"| {os.path.basename(vol)} | {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
