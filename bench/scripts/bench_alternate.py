#!/usr/bin/env python3
"""`isoterra bench GROUP --json` of two or more builds, alternated: the
figures a change moves, measured in turns so that a host whose speed
drifts treats every build alike.

Each round runs every build once (the order reverses every round, so that
no build always follows the same one) and prints, per build and figure,
the median and the maximum of `value` and of `chunks_per_cpu_s` (or
`cpu_ms`, where the figure has one) over the rounds.

    bench/scripts/bench_alternate.py --build before=/path/to/old/isoterra \\
        --build after=target/release/isoterra --group stream --rounds 12 \\
        --name voxel_caves_32_chunks --name voxel_caves_32_request_1_thread
"""

import argparse
import json
import statistics
import subprocess
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", action="append", required=True, help="NAME=PATH of an isoterra binary")
    ap.add_argument("--group", default="stream", help="the bench group (stream, map, erosion, ...)")
    ap.add_argument("--reps", type=int, default=3, help="--reps of each bench run")
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--name", action="append", help="figures to keep (default: every figure)")
    args = ap.parse_args()
    builds = []
    for b in args.build:
        name, sep, path = b.partition("=")
        if not sep:
            ap.error(f"--build wants NAME=PATH, got {b!r}")
        builds.append((name, path))
    figures = {name: {} for name, _ in builds}
    order = list(builds)
    for r in range(args.rounds):
        for name, path in order:
            run = subprocess.run(
                [path, "bench", args.group, "--json", "--reps", str(args.reps)],
                capture_output=True,
                text=True,
            )
            if run.returncode != 0:
                print(f"{name}: bench {args.group} failed:\n{run.stderr}", file=sys.stderr)
                return 1
            for line in run.stdout.splitlines():
                fig = json.loads(line)
                if args.name and fig["name"] not in args.name:
                    continue
                cpu = fig.get("chunks_per_cpu_s", fig.get("cpu_ms"))
                figures[name].setdefault(fig["name"], []).append((fig["value"], cpu, fig["unit"]))
        order.reverse()
        print(f"round {r + 1} of {args.rounds} done", file=sys.stderr)
    for name, _ in builds:
        for fig, runs in figures[name].items():
            values = [v for v, _, _ in runs]
            line = f"{name:12} {fig:36} {runs[0][2]:9} median {statistics.median(values):11.1f} max {max(values):11.1f}"
            cpus = [c for _, c, _ in runs if c is not None]
            if cpus:
                line += f" | cpu median {statistics.median(cpus):11.1f} max {max(cpus):11.1f}"
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
