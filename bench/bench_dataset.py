"""Speed of the data engine on this machine: scenes per second (geometry, render, export).

    nice -n 10 .venv/bin/python bench/bench_dataset.py [--scenes 40] [--workers 1 2]

Builds `--scenes` scenes (seed 99) into a temporary folder with each worker count and
reports scenes/s of `datasets.build` (scene + render + JPEG, all designs, 2-12 MP), the
geometry alone (`make_scene`), and `datasets.export` on the result. Numbers depend on what
else runs on the machine: report the load average with them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from datasets import art, build, export  # noqa: E402
from datasets.scene import make_scene  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scenes", type=int, default=40)
    ap.add_argument("--workers", type=int, nargs="*", default=[1, 2])
    args = ap.parse_args()
    manifest = art.prepare_all()
    geoms = art.geometries(manifest)
    result = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
              "load_before": os.getloadavg()}
    t0 = time.time()
    n_geo = 200
    for i in range(n_geo):
        make_scene(np.random.default_rng([99, i]), geoms, seed=i)
    result["make_scene_per_s"] = round(n_geo / (time.time() - t0), 1)
    tmp = Path(tempfile.mkdtemp(prefix="bench-dataset-"))
    try:
        for workers in args.workers:
            out = tmp / f"w{workers}"
            secs = build.build(args.scenes, 99, out, workers=workers, progress=False)
            result[f"build_scenes_per_s_workers_{workers}"] = round(args.scenes / secs, 2)
            mp = [json.loads(p.read_text())["camera"]["megapixels"] for p in out.rglob("scene_*.json")]
            result["mean_megapixels"] = round(float(np.mean(mp)), 2)
        t0 = time.time()
        export.export(out, tmp / "export", workers=max(args.workers), progress=False)
        result["export_scenes_per_s"] = round(args.scenes / (time.time() - t0), 2)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    result["load_after"] = os.getloadavg()
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
