#!/usr/bin/env python3
"""Marching cubes peers for `bench/benches/cubes.rs`: scikit-image and VTK.

Meshes the same fields as the criterion bench, single-threaded, and prints one
JSON object per line:

    {"group": "cubes", "name": "sphere_noise_256/vtk_flying_edges_normals",
     "unit": "ms", "value": 12.3, "mvox_s": ..., "mtri_s": ..., "triangles": ...,
     "vertices": ...}

`value` is the median wall time of the runs in milliseconds, `cpu_ms` the
median CPU time of the process (every thread) per run; `mvox_s` counts cells
((N-1)^3) per second, `mtri_s` triangles per second (both from the wall time).

Fields (N^3 nodes, x fastest, computed in float64 and rounded once to float32,
iso 0):

* sphere_noise_N: p in linspace(-1, 1, N)^3,
  f = |p| - 0.6 + 0.05 sin(7x+1.3) sin(9y+0.7) sin(8z+2.1)
      + 0.02 sin(23x+17y+0.4) cos(19z+1.1)
* gyroid_K_N: p in linspace(0, 2 pi K, N)^3,
  f = sin x cos y + sin y cos z + sin z cos x

Contenders:

* skimage_lewiner: skimage.measure.marching_cubes(level=0) (Lewiner's marching
  cubes, welded, always computes normals; Cython, single-threaded).
* vtk_flying_edges_normals / vtk_flying_edges_plain: vtkFlyingEdges3D with and
  without normals (welded), on the sequential SMP backend (one thread).

Setup and run (from the repository root):

    python3 -m venv bench/peers/.venv
    bench/peers/.venv/bin/pip install numpy scikit-image vtk
    bench/peers/.venv/bin/python bench/peers/cubes_peers.py [--runs 7] [--only NAME]
        [--vtk-threads 2]   # VTK on its STDThread backend; no scikit-image
        [--vtk-only]        # no scikit-image
"""

import argparse
import json
import os
import statistics
import time

# One thread everywhere, before numpy and VTK load their thread pools.
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VTK_SMP_MAX_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402


def grid(n, lo, hi):
    """Coordinates as [z, y, x] arrays of shape (n, n, n): x is the fastest axis."""
    p = np.linspace(lo, hi, n, dtype=np.float64)
    return np.meshgrid(p, p, p, indexing="ij")


def sphere_noise(n):
    z, y, x = grid(n, -1.0, 1.0)
    f = (
        np.sqrt(x * x + y * y + z * z)
        - 0.6
        + 0.05 * np.sin(7 * x + 1.3) * np.sin(9 * y + 0.7) * np.sin(8 * z + 2.1)
        + 0.02 * np.sin(23 * x + 17 * y + 0.4) * np.cos(19 * z + 1.1)
    )
    return f.astype(np.float32)


def gyroid(k, n):
    z, y, x = grid(n, 0.0, 2.0 * np.pi * k)
    f = np.sin(x) * np.cos(y) + np.sin(y) * np.cos(z) + np.sin(z) * np.cos(x)
    return f.astype(np.float32)


def workloads():
    return [
        ("sphere_noise_128", lambda: sphere_noise(128)),
        ("gyroid_8_128", lambda: gyroid(8, 128)),
        ("sphere_noise_256", lambda: sphere_noise(256)),
        ("gyroid_16_256", lambda: gyroid(16, 256)),
    ]


CPU_SECONDS = {}


def timed(fn, runs):
    """Median wall seconds and the last result; the median CPU seconds of the
    process per run go to `CPU_SECONDS["last"]`."""
    times = []
    cpu = []
    result = None
    for _ in range(runs):
        c0 = time.process_time()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    CPU_SECONDS["last"] = statistics.median(cpu)
    return statistics.median(times), result


def report(name, contender, seconds, n, triangles, vertices):
    cells = (n - 1) ** 3
    print(
        json.dumps(
            {
                "group": "cubes",
                "name": f"{name}/{contender}",
                "unit": "ms",
                "value": round(seconds * 1e3, 3),
                "cpu_ms": round(CPU_SECONDS.get("last", float("nan")) * 1e3, 3),
                "mvox_s": round(cells / seconds / 1e6, 1),
                "mtri_s": round(triangles / seconds / 1e6, 2),
                "triangles": int(triangles),
                "vertices": int(vertices),
            }
        ),
        flush=True,
    )


def bench_skimage(name, vol, runs):
    from skimage import measure

    def run():
        return measure.marching_cubes(vol, level=0.0)

    run()  # warm up
    sec, (verts, faces, _normals, _values) = timed(run, runs)
    report(name, "skimage_lewiner", sec, vol.shape[0], len(faces), len(verts))


def bench_vtk(name, vol, runs, threads=1):
    import vtk
    from vtk.util import numpy_support

    smp = vtk.vtkSMPTools()
    try:
        smp.SetBackend("Sequential" if threads == 1 else "STDThread")
    except AttributeError:
        pass
    smp.Initialize(threads)
    if threads > 1 and smp.GetBackend() != "STDThread":
        raise SystemExit(f"this VTK has no STDThread backend (it has {smp.GetBackend()})")
    n = vol.shape[0]
    image = vtk.vtkImageData()
    image.SetDimensions(n, n, n)
    # Zero copy (numpy_to_vtk's default): VTK reads numpy's buffer, which
    # numpy backs with huge pages at this size, as isoterra's bench volumes
    # and .npy reads are. `flat` must outlive the filter.
    flat = vol.ravel(order="C")
    scalars = numpy_support.numpy_to_vtk(flat, deep=False)
    image.GetPointData().SetScalars(scalars)
    for normals in (True, False):
        fe = vtk.vtkFlyingEdges3D()
        fe.SetInputData(image)
        fe.SetValue(0, 0.0)
        fe.SetComputeNormals(normals)
        fe.SetComputeGradients(False)
        fe.SetComputeScalars(False)
        fe.SetInterpolateAttributes(False)

        def run():
            fe.Modified()
            fe.Update()
            return fe.GetOutput()

        run()  # warm up
        sec, out = timed(run, runs)
        label = "vtk_flying_edges_normals" if normals else "vtk_flying_edges_plain"
        if threads > 1:
            label += f"_threads_{threads}"
        report(name, label, sec, n, out.GetNumberOfCells(), out.GetNumberOfPoints())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=7, help="timed runs per contender (median)")
    ap.add_argument("--only", default="", help="only workloads whose name contains this")
    ap.add_argument(
        "--vtk-threads",
        type=int,
        default=1,
        help="VTK on this many threads (its STDThread backend); scikit-image is skipped",
    )
    ap.add_argument("--vtk-only", action="store_true", help="VTK only (no scikit-image)")
    args = ap.parse_args()
    if args.vtk_threads > 1:
        os.environ["VTK_SMP_MAX_THREADS"] = str(args.vtk_threads)
    for name, make in workloads():
        if args.only not in name:
            continue
        vol = make()
        bench_vtk(name, vol, args.runs, args.vtk_threads)
        if args.vtk_threads == 1 and not args.vtk_only:
            bench_skimage(name, vol, args.runs)


if __name__ == "__main__":
    main()
