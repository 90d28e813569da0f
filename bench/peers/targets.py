#!/usr/bin/env python3
"""Every performance target in one sitting, side by side with its peer.

Runs, in rounds that alternate the contenders (so that a host whose speed
drifts moves both sides of each ratio):

* `isoterra bench cubes --json` and `cubes_peers.py --vtk-only` (VTK's
  vtkFlyingEdges3D with normals, one thread and, with `--vtk-threads 2`,
  two; on one thread also with `MALLOC_MMAP_THRESHOLD_=131072`, so that
  each `Update()` writes fresh memory as a one-shot call does, instead of
  arrays glibc recycled from the previous call);
* `isoterra bench squares --json` and `contourpy_bench.py` (contourpy's
  serial `lines()`, 2048^2, and 8192^2 unless `--no-8192`);

then, once, `isoterra bench stream`, `map` and `erosion --json`. Prints a
Markdown table of each target with its figure in every round, the
machine's yardsticks (`core_yardstick`, `read_yardstick_gbs`, load) and
whether the target was met in every round, some or none. With `--out
FILE`, every JSON line read is also written there, tagged with its round.

    bench/peers/.venv/bin/python bench/peers/targets.py \
        [--isoterra target/release/isoterra] [--rounds 2] [--out sitting.jsonl]

Run it from the repository root after `cargo build --release`, on an
otherwise idle machine; it takes about 10 minutes a round on two cores.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def json_lines(cmd, env=None):
    """Runs `cmd` (with `env` added to the environment) and returns the JSON
    objects it printed, one per line."""
    full = dict(os.environ, **env) if env else None
    run = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, env=full)
    if run.returncode != 0:
        # A peer that is not installed, say: its rows stay "not measured".
        say(f"warning: {' '.join(cmd)} exited with {run.returncode}; its figures are left out")
    out = run.stdout
    rows = []
    for line in out.splitlines():
        line = line.strip()
        if line.startswith("{"):
            rows.append(json.loads(line))
    return rows


def fmt(v, digits=2):
    if v is None:
        return "—"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def verdict(oks):
    oks = [ok for ok in oks if ok is not None]
    if not oks:
        return "not measured"
    if all(oks):
        return "met in every round"
    if any(oks):
        return f"met in {sum(oks)} of {len(oks)} rounds"
    return "missed"


class Sitting:
    def __init__(self, args):
        self.args = args
        self.rounds = []  # one dict of name -> row per round
        self.once = {}
        self.out = open(args.out, "w") if args.out else None

    def take(self, cmd, tag, env=None, suffix=""):
        """Runs `cmd`, writes its rows to `--out` tagged with `tag` (names
        with `suffix` added) and returns them by name."""
        rows = json_lines(cmd, env)
        for r in rows:
            r["name"] += suffix
        if self.out:
            for r in rows:
                self.out.write(json.dumps({"round": tag, **r}) + "\n")
            self.out.flush()
        return {r["name"]: r for r in rows}

    def round(self, i):
        a = self.args
        py = sys.executable
        bench = lambda group: [a.isoterra, "bench", group, "--json", "--reps", str(a.reps)]
        rows = {}
        say(f"round {i}: isoterra bench cubes")
        rows.update(self.take(bench("cubes"), i))
        say(f"round {i}: VTK")
        vtk = [py, os.path.join(HERE, "cubes_peers.py"), "--runs", str(a.peer_runs), "--vtk-only"]
        rows.update(self.take(vtk, i))
        # VTK on fresh memory, as a one-shot call gets it: glibc otherwise
        # raises its mmap threshold after the first large free and hands a
        # loop of Update() calls its arrays back from the heap, touched.
        rows.update(self.take(vtk, i, {"MALLOC_MMAP_THRESHOLD_": "131072"}, "@fresh"))
        if a.vtk_threads > 1:
            rows.update(self.take(vtk + ["--vtk-threads", str(a.vtk_threads)], i))
        say(f"round {i}: isoterra bench squares")
        rows.update(self.take(bench("squares"), i))
        say(f"round {i}: contourpy")
        cp = [py, os.path.join(HERE, "contourpy_bench.py")]
        rows.update(self.take(cp + ["--runs", "15"], i))
        if not a.no_8192:
            rows.update(self.take(cp + ["--n", "8192", "--runs", "5"], i))
        self.rounds.append(rows)

    def singles(self):
        for group in ("stream", "map", "erosion"):
            say(f"isoterra bench {group}")
            self.once.update(self.take([self.args.isoterra, "bench", group, "--json"], "once"))

    # Lookups over the rounds.
    def each(self, fn):
        out = []
        for rows in self.rounds:
            try:
                out.append(fn(rows))
            except (KeyError, ZeroDivisionError, TypeError):
                out.append(None)
        return out

    def report(self):
        lines = ["| target | figure, each round | state |", "|---|---|---|"]

        def row(target, values, ok, unit=""):
            figs = ", ".join(fmt(v, 3 if unit == "×" else 2) + unit for v in values)
            oks = [None if v is None else ok(v) for v in values]
            lines.append(f"| {target} | {figs} | {verdict(oks)} |")

        ms = lambda r, n: r[n]["wall_ms"]
        vtk = lambda r, n: r[f"{n}/vtk_flying_edges_normals"]["value"]
        cubes = [("sphere_noise_128", "sphere_noise_128"), ("gyroid8_128", "gyroid_8_128"),
                 ("sphere_noise_256", "sphere_noise_256"), ("gyroid16_256", "gyroid_16_256")]
        for ours, _ in cubes:
            row(f"one-shot ÷ warm ≤ 1.15, {ours}", self.each(lambda r: ms(r, ours + "_cold") / ms(r, ours)),
                lambda v: v <= 1.15, "×")
        for ours, peer, goal in (("sphere_noise_256", "sphere_noise_256", 3.0),
                                 ("gyroid8_128", "gyroid_8_128", 2.0),
                                 ("gyroid16_256", "gyroid_16_256", 2.0)):
            row(f"one-shot ≥ {goal:g}× VTK (normals, one thread, both on fresh memory), {ours}",
                self.each(lambda r: r[f"{peer}/vtk_flying_edges_normals@fresh"]["value"] / ms(r, ours + "_cold")),
                lambda v, g=goal: v >= g, "×")
            row(f"one-shot ≥ {goal:g}× VTK (normals, one thread, VTK's arrays recycled by glibc), {ours}",
                self.each(lambda r: vtk(r, peer) / ms(r, ours + "_cold")), lambda v, g=goal: v >= g, "×")
        for ours in ("sphere_noise_256", "gyroid16_256"):
            row(f"two threads ≥ 1.7× one, warm, {ours}",
                self.each(lambda r: ms(r, ours) / ms(r, ours + "_threads_2")), lambda v: v >= 1.7, "×")
            row(f"two threads ≥ 1.7× one, one-shot, {ours}",
                self.each(lambda r: ms(r, ours + "_cold") / ms(r, ours + "_cold_threads_2")), lambda v: v >= 1.7, "×")
        if self.args.vtk_threads > 1:
            t = self.args.vtk_threads
            for ours, peer in cubes[2:]:
                row(f"(no target) two threads against VTK on {t}, one-shot, {ours}",
                    self.each(lambda r: r[f"{peer}/vtk_flying_edges_normals_threads_{t}"]["value"]
                              / ms(r, ours + "_cold_threads_2")), lambda v: v >= 1.0, "×")
        cp = lambda r, n: r[f"contourpy_serial_Separate/dense_{n}"]["value"]
        for n in (2048,) + (() if self.args.no_8192 else (8192,)):
            for cold in ("", "_cold"):
                row(f"dense {n}² contour ≥ 4× contourpy, {'one-shot' if cold else 'warm'}",
                    self.each(lambda r: cp(r, n) / ms(r, f"contour_lines_dense_{n}{cold}")), lambda v: v >= 4.0, "×")
        o = self.once

        def single(target, name, key, ok, unit=""):
            v = o.get(name, {}).get(key)
            lines.append(f"| {target} | {fmt(v)}{unit} (once) | {verdict([None if v is None else ok(v)])} |")

        single("voxel streaming ≥ 4,000 chunks/s, two cores", "voxel_caves_32_chunks", "value", lambda v: v >= 4000)
        single("heightmap streaming ≥ 25,000 chunks/s, two cores", "heightmap_64_mixed_lod_chunks", "value",
               lambda v: v >= 25000)
        single("brush r100 + remesh ≤ 8 ms, one thread", "brush_r100_512_apply_remesh", "one_thread_ms",
               lambda v: v <= 8.0, " ms")
        single("erosion ≥ 1.5 M droplets per CPU s", "hydraulic_512", "droplets_per_cpu_s", lambda v: v >= 1.5e6)
        print("\n".join(lines))
        machine = []
        for i, rows in enumerate(self.rounds, 1):
            ys = [r for r in rows.values() if "core_yardstick" in r]
            if ys:
                core = [r["core_yardstick"] for r in ys]
                read = [r["read_yardstick_gbs"] for r in ys if "read_yardstick_gbs" in r]
                load = [r["load_start"][0] for r in ys if "load_start" in r]
                machine.append(
                    f"round {i}: core_yardstick {min(core):.0f}–{max(core):.0f}, "
                    f"read_yardstick_gbs {min(read):.1f}–{max(read):.1f}, load {min(load):.2f}–{max(load):.2f}"
                )
        print()
        print("\n".join(machine))
        vt = [r.get("sphere_noise_256/vtk_flying_edges_normals", {}).get("value") for r in self.rounds]
        if any(v is not None for v in vt):
            print(f"VTK sphere_noise_256 with normals: {', '.join(fmt(v) for v in vt)} ms "
                  f"(median {fmt(statistics.median([v for v in vt if v is not None]))})")


def say(msg):
    print(msg, file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--isoterra", default="target/release/isoterra", help="the CLI binary")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of cubes and squares with their peers")
    ap.add_argument("--reps", type=int, default=15, help="repetitions per isoterra workload")
    ap.add_argument("--peer-runs", type=int, default=9, help="timed runs per VTK workload")
    ap.add_argument("--vtk-threads", type=int, default=2, help="also VTK on this many threads (1: not)")
    ap.add_argument("--no-8192", action="store_true", help="skip the 8192^2 contours")
    ap.add_argument("--out", default=None, help="also write every JSON line read to this file")
    args = ap.parse_args()
    if not os.access(args.isoterra, os.X_OK):
        sys.exit(f"{args.isoterra} is not an executable; build it with cargo build --release")
    for name in ("rounds", "reps", "peer_runs", "vtk_threads"):
        if getattr(args, name) < 1:
            sys.exit(f"--{name.replace('_', '-')} must be at least 1")
    s = Sitting(args)
    for i in range(1, args.rounds + 1):
        s.round(i)
    s.singles()
    s.report()


if __name__ == "__main__":
    main()
