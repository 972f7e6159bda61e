"""Build a synthetic dataset: `python -m datasets.build --scenes N --seed S --out DIR`.

Each scene i gets its own random stream from (seed, i), so the output is the same for
a seed whatever the number of workers, and a build can be extended or resumed (existing
scenes are skipped). Scenes are split by index: about 80 % train, 10 % val (same designs
and tables as train) and 10 % test (held-out designs and table textures only); `--split
test` builds only one split's scenes (the same ones a whole build would make). Writes
`DIR/<split>/scene_XXXXXX.jpg` + `.json` per scene (format in docs/ARCHITECTURE.md) and
`DIR/build.json` (arguments, design manifest). Card art is prepared on first use
(`datasets.art`), which fetches the npm decks and needs the Debian card packages.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from datasets import art, reletter
from datasets.render import ArtBank, backgrounds_for, render
from datasets.scene import SceneParams, make_scene

DEFAULT_OUT = art.ROOT / "build" / "scenes"


def split_of(index: int) -> str:
    """Split of scene i: 8 of every 10 train, 1 val, 1 test (interleaved, so any prefix is mixed)."""
    r = index % 10
    return "val" if r == 8 else "test" if r == 9 else "train"


def scene_indices(start: int, scenes: int, split: str | None = None) -> list[int]:
    """Indices of scenes [start, start+scenes), only those of `split` if one is given."""
    return [i for i in range(start, start + scenes) if split is None or split_of(i) == split]


_WORKER: dict[str, Any] = {}


def _init_worker(manifest: dict[str, Any], params: SceneParams, only: list[str] | None) -> None:
    cv2.setNumThreads(1)
    _WORKER["bank"] = ArtBank(manifest)
    _WORKER["params"] = params
    geoms = art.geometries(manifest)
    names = [n for n in geoms if only is None or n in only]
    _WORKER["designs"] = {
        "train": {n: geoms[n] for n in names if manifest[n]["split"] == "train"},
        "test": {n: geoms[n] for n in names if manifest[n]["split"] == "test"},
    }


def build_one(seed: int, index: int, out: Path, quality: tuple[int, int] = (60, 95)) -> str:
    """Generate, render and save scene `index` of a build; returns its JSON path."""
    split = split_of(index)
    stem = out / split / f"scene_{index:06d}"
    if stem.with_suffix(".json").exists() and stem.with_suffix(".jpg").exists():
        return str(stem.with_suffix(".json"))
    stem.parent.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([seed, index])
    designs = _WORKER["designs"]["test" if split == "test" else "train"]
    if not designs:  # a restricted build (--designs) may lack held-out designs
        designs = _WORKER["designs"]["train"] or _WORKER["designs"]["test"]
    scene = make_scene(rng, designs, params=_WORKER["params"], split=split, seed=index,
                       backgrounds=backgrounds_for(split))
    scene.file = stem.name + ".jpg"
    rgb = render(scene, _WORKER["bank"], rng)
    q = int(rng.integers(quality[0], quality[1] + 1))
    scene.render["jpeg_quality"] = q
    ok, buf = cv2.imencode(".jpg", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, q])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    tmp = stem.with_suffix(".jpg.tmp")
    tmp.write_bytes(buf.tobytes())
    os.replace(tmp, stem.with_suffix(".jpg"))
    stem.with_suffix(".json").write_text(scene.dumps())
    return str(stem.with_suffix(".json"))


def _task(args: tuple[int, int, str]) -> str:
    seed, index, out = args
    return build_one(seed, index, Path(out))


def build(scenes: int, seed: int, out: Path, workers: int = 2, start: int = 0,
          designs: list[str] | None = None, params: SceneParams | None = None,
          progress: bool = True, split: str | None = None, relettered: int = 0,
          reletter_seed: int = 11, reletter_fonts: str = "listed") -> float:
    """Build scenes [start, start+scenes) into out; returns seconds taken.

    With `split` ("train", "val" or "test") only the scenes of that split among them are
    built: the same scenes, same files, as a whole build would make for that split.
    """
    from tqdm import tqdm

    params = params or SceneParams()
    manifest = art.prepare_all(designs)
    if relettered:  # training decks printed anew in other fonts (datasets/reletter.py)
        manifest.update(reletter.prepare(relettered, reletter_seed, fonts=reletter_fonts))
    if not manifest:
        raise SystemExit(f"no card designs available (asked for {designs})")
    out.mkdir(parents=True, exist_ok=True)
    (out / "build.json").write_text(json.dumps(
        {"seed": seed, "scenes": start + scenes, "split": split, "designs": sorted(manifest),
         "test_designs": sorted(n for n, m in manifest.items() if m["split"] == "test"),
         "manifest": manifest}, indent=1))
    tasks = [(seed, i, str(out)) for i in scene_indices(start, scenes, split)]
    t0 = time.time()
    bar = tqdm(total=len(tasks), unit="scene", disable=not progress, smoothing=0.1)
    if workers <= 1:
        _init_worker(manifest, params, designs)
        for t in tasks:
            _task(t)
            bar.update()
    else:
        # spawn, not fork: preparing the art (GLib/librsvg, OpenCV) leaves threads in this
        # process, and a forked worker then hung forever on its first scene.
        ctx = get_context("spawn")
        with ctx.Pool(workers, initializer=_init_worker, initargs=(manifest, params, designs)) as pool:
            for _ in pool.imap_unordered(_task, tasks, chunksize=2):
                bar.update()
    bar.close()
    return time.time() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m datasets.build", description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", type=int, required=True, help="number of scenes to build")
    ap.add_argument("--seed", type=int, default=1, help="dataset seed (same seed, same scenes)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    ap.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    ap.add_argument("--start", type=int, default=0, help="first scene index (to extend a build)")
    ap.add_argument("--designs", nargs="*", help="restrict to these card designs (e.g. letele)")
    ap.add_argument("--max-megapixels", type=float, default=12.0, help="largest photo size (default 12)")
    ap.add_argument("--min-megapixels", type=float, default=2.0,
                    help="smallest photo size (default 2; 12 with --max-megapixels 12: every "
                         "photo the size a phone takes)")
    ap.add_argument("--split", choices=["train", "val", "test"],
                    help="build only this split's scenes of the range (e.g. a test set)")
    ap.add_argument("--relettered", type=int, default=0, metavar="N",
                    help="add N relettered training designs (datasets/reletter.py; train/val only)")
    ap.add_argument("--reletter-seed", type=int, default=11)
    ap.add_argument("--reletter-fonts", choices=sorted(reletter.FONT_SETS), default="listed",
                    help="relettered designs' fonts: FONT_FILES, or every installed one (datasets/reletter.py)")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if args.scenes < 1:
        print("error: --scenes must be at least 1", file=sys.stderr)
        return 2
    if args.max_megapixels < 2.0:
        print("error: --max-megapixels must be at least 2", file=sys.stderr)
        return 2
    if not 0.5 <= args.min_megapixels <= args.max_megapixels:
        print("error: --min-megapixels must be from 0.5 to --max-megapixels", file=sys.stderr)
        return 2
    params = SceneParams(megapixels=(args.min_megapixels, args.max_megapixels))
    secs = build(args.scenes, args.seed, args.out, args.workers, args.start, args.designs, params,
                 progress=not args.no_progress, split=args.split, relettered=args.relettered,
                 reletter_seed=args.reletter_seed, reletter_fonts=args.reletter_fonts)
    built = len(scene_indices(args.start, args.scenes, args.split))
    print(f"built {built} scenes in {secs:.1f} s ({built / secs:.2f} scenes/s) into {args.out}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
