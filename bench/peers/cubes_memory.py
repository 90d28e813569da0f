#!/usr/bin/env python3
"""What VTK takes to turn a `.npy` volume into a PLY file, for peak-memory
comparisons with `isoterra mesh3d` (run each under `/usr/bin/time -f %M`).

The pipeline a user would write: `numpy.load`, the array wrapped as a
`vtkImageData` without a copy, `vtkFlyingEdges3D` at iso 0 with normals
(welded, as `isoterra mesh3d` writes), and a binary PLY through
`vtkPLYWriter`. Prints one JSON line with the mesh's size and the times.

    /usr/bin/time -f "%M KB" bench/peers/.venv/bin/python \\
        bench/peers/cubes_memory.py gyroid_16_512.npy out.ply [--no-normals]
"""

import argparse
import json
import os
import time

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")

import numpy as np  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("npy")
    ap.add_argument("ply")
    ap.add_argument("--no-normals", action="store_true")
    args = ap.parse_args()

    import vtk
    from vtk.util import numpy_support

    t0 = time.perf_counter()
    vol = np.load(args.npy)
    nz, ny, nx = vol.shape
    image = vtk.vtkImageData()
    image.SetDimensions(nx, ny, nz)
    # x is the fastest axis in both layouts: no copy.
    scalars = numpy_support.numpy_to_vtk(vol.reshape(-1), deep=False)
    image.GetPointData().SetScalars(scalars)
    t1 = time.perf_counter()

    fe = vtk.vtkFlyingEdges3D()
    fe.SetInputData(image)
    fe.SetValue(0, 0.0)
    fe.SetComputeNormals(not args.no_normals)
    fe.SetComputeGradients(False)
    fe.SetComputeScalars(False)
    fe.SetInterpolateAttributes(False)
    fe.Update()
    out = fe.GetOutput()
    t2 = time.perf_counter()

    writer = vtk.vtkPLYWriter()
    writer.SetFileTypeToBinary()
    writer.SetInputData(out)
    writer.SetFileName(args.ply)
    writer.Write()
    t3 = time.perf_counter()

    print(
        json.dumps(
            {
                "npy": os.path.basename(args.npy),
                "vertices": out.GetNumberOfPoints(),
                "triangles": out.GetNumberOfCells(),
                "vtk_threads": vtk.vtkSMPTools.GetEstimatedNumberOfThreads(),
                "load_ms": round((t1 - t0) * 1e3, 1),
                "mesh_ms": round((t2 - t1) * 1e3, 1),
                "write_ms": round((t3 - t2) * 1e3, 1),
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
