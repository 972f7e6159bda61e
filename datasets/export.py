"""Exports of a built scene folder for training: YOLO tiles and classifier crops.

`python -m datasets.export --scenes build/scenes --out build/export [--tile 640]
[--long-side 1600]` writes

- `OUT/yolo/`: a one-class ultralytics dataset (`images/{train,val,test}`,
  `labels/{train,val,test}`, `data.yaml`, class 0 = `index`). Each scene is rescaled so
  its long side is about `--long-side` px (jittered by `--scale-jitter`, as the run-time
  detector sees a photo), then cut into `--tiles-per-scene` tiles of `--tile` px, most
  centred near indices and some anywhere (background-only tiles included). Only indices
  at least `--min-visible` visible are labelled; a label box is clipped to the tile and
  dropped when less than half of it is inside.
- `OUT/crops/{train,val,test}.npz`: every readable index cut from the FULL-resolution
  photo with `scanner.detector.crop_indices` (the run-time crop: square, margin and size
  from scanner/detector.py unless overridden), with `crops` (N,S,S,3 uint8 RGB),
  `labels` (class id in scanner.classes.INDEX_CLASSES order), `angles` (degrees, the
  direction the printed index's top points: 0 up, 90 right), `scene` and `design`.

The split of a scene is the one it was built with (test = held-out designs and tables).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from scanner.classes import CLASS_ID
from scanner.detector import CROP_MARGIN, CROP_SIZE, crop_indices

SPLITS = ("train", "val", "test")


def readable_indices(scene: dict[str, Any], min_visible: float) -> list[dict[str, Any]]:
    """Index records (box, angle, rank, design) of a scene visible enough to read."""
    out = []
    for card in scene["cards"]:
        if not card.get("face_up", True):
            continue
        for ix in card.get("indices", []):
            if ix["visible"] >= min_visible:
                out.append({"box": ix["box"], "angle": ix["angle"], "rank": card["rank"],
                            "design": card["design"]})
    return out


def _all_index_boxes(scene: dict[str, Any]) -> np.ndarray:
    return np.array([ix["box"] for c in scene["cards"] for ix in c.get("indices", [])],
                    dtype=np.float32).reshape(-1, 4)


def tile_scene(scene: dict[str, Any], rgb: np.ndarray, rng: np.random.Generator, tile: int,
               long_side: int, jitter: float, n_tiles: int, min_visible: float,
               background_p: float = 0.15) -> list[tuple[np.ndarray, np.ndarray]]:
    """(tile image, (K,4) xyxy boxes in tile px) pairs cut from one scene."""
    h, w = rgb.shape[:2]
    boxes = np.array([r["box"] for r in readable_indices(scene, min_visible)], np.float32).reshape(-1, 4)
    out = []
    for _ in range(n_tiles):
        target = long_side * float(np.exp(rng.uniform(-jitter, jitter)))
        s = min(1.0, target / max(h, w))
        sw, sh = max(tile, round(w * s)), max(tile, round(h * s))
        s = min(sw / w, sh / h)
        sb = boxes * s
        if len(sb) and rng.random() > background_p:
            c = sb[rng.integers(len(sb))]
            cx = (c[0] + c[2]) / 2 + rng.uniform(-0.45, 0.45) * tile
            cy = (c[1] + c[3]) / 2 + rng.uniform(-0.45, 0.45) * tile
        else:  # anywhere: mostly table, clutter and card backs
            cx, cy = rng.uniform(0, sw), rng.uniform(0, sh)
        x0 = int(np.clip(cx - tile / 2, 0, max(0, sw - tile)))
        y0 = int(np.clip(cy - tile / 2, 0, max(0, sh - tile)))
        # resize only the part of the photo the tile needs (INTER_AREA, like the runtime)
        xa, ya = int(x0 / s), int(y0 / s)
        xb, yb = min(w, int(np.ceil((x0 + tile) / s)) + 1), min(h, int(np.ceil((y0 + tile) / s)) + 1)
        part = cv2.resize(rgb[ya:yb, xa:xb], (max(1, round((xb - xa) * s)), max(1, round((yb - ya) * s))),
                          interpolation=cv2.INTER_AREA)
        img = np.full((tile, tile, 3), 114, np.uint8)
        ph, pw = min(tile, part.shape[0]), min(tile, part.shape[1])
        img[:ph, :pw] = part[:ph, :pw]
        tb = sb - [xa * s, ya * s, xa * s, ya * s]
        clipped = np.clip(tb, 0, [pw, ph, pw, ph])
        area = (tb[:, 2] - tb[:, 0]) * (tb[:, 3] - tb[:, 1])
        inside = (clipped[:, 2] - clipped[:, 0]) * (clipped[:, 3] - clipped[:, 1])
        keep = inside >= 0.5 * np.maximum(area, 1e-6)
        out.append((img, clipped[keep]))
    return out


def _export_scene(args: tuple) -> dict[str, Any]:
    json_path, out, opts = args
    scene = json.loads(Path(json_path).read_text())
    split = scene["split"]
    bgr = cv2.imread(str(Path(json_path).with_name(scene["image"]["file"])), cv2.IMREAD_COLOR)
    if bgr is None:
        return {"split": split, "error": f"cannot read image of {json_path}"}
    rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
    rng = np.random.default_rng([opts["seed"], int(scene["seed"])])
    stem = Path(json_path).stem
    n_labels = 0
    tiles = tile_scene(scene, rgb, rng, opts["tile"], opts["long_side"], opts["jitter"],
                       opts["tiles_per_scene"], opts["min_visible"], opts["background_p"])
    for t, (img, boxes) in enumerate(tiles):
        name = f"{stem}_{t}"
        cv2.imwrite(str(Path(out) / "yolo" / "images" / split / f"{name}.jpg"),
                    cv2.cvtColor(img, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 92])
        ts = opts["tile"]
        lines = [f"0 {(b[0] + b[2]) / 2 / ts:.6f} {(b[1] + b[3]) / 2 / ts:.6f} "
                 f"{(b[2] - b[0]) / ts:.6f} {(b[3] - b[1]) / ts:.6f}" for b in boxes]
        (Path(out) / "yolo" / "labels" / split / f"{name}.txt").write_text("\n".join(lines) + ("\n" if lines else ""))
        n_labels += len(lines)
    items = readable_indices(scene, opts["min_visible"])
    crops = crop_indices(rgb, np.array([r["box"] for r in items], np.float32).reshape(-1, 4),
                         size=opts["crop_size"], margin=opts["crop_margin"])
    return {
        "split": split, "tiles": len(tiles), "labels": n_labels, "crops": crops,
        "classes": np.array([CLASS_ID[r["rank"]] for r in items], np.int64),
        "angles": np.array([r["angle"] for r in items], np.float32),
        "scene": np.full(len(items), int(scene["seed"]), np.int64),
        "design": np.array([r["design"] for r in items], dtype=object),
    }


def export(scenes: Path, out: Path, tile: int = 640, long_side: int = 1600, jitter: float = 0.25,
           tiles_per_scene: int = 4, min_visible: float = 0.6, background_p: float = 0.15,
           crop_size: int = CROP_SIZE, crop_margin: float = CROP_MARGIN, seed: int = 0,
           workers: int = 2, progress: bool = True) -> dict[str, Any]:
    """Write the YOLO dataset and the classifier crops; returns counts per split."""
    from tqdm import tqdm

    files = sorted(scenes.rglob("scene_*.json"))
    if not files:
        raise SystemExit(f"no scene_*.json under {scenes}: build some with python -m datasets.build")
    for split in SPLITS:
        (out / "yolo" / "images" / split).mkdir(parents=True, exist_ok=True)
        (out / "yolo" / "labels" / split).mkdir(parents=True, exist_ok=True)
    (out / "crops").mkdir(parents=True, exist_ok=True)
    opts = {"tile": tile, "long_side": long_side, "jitter": jitter, "tiles_per_scene": tiles_per_scene,
            "min_visible": min_visible, "background_p": background_p, "crop_size": crop_size,
            "crop_margin": crop_margin, "seed": seed}
    tasks = [(str(f), str(out), opts) for f in files]
    results: list[dict[str, Any]] = []
    t0 = time.time()
    # One worker runs in this process: forking a process that already runs threads (a test
    # runner, onnxruntime, a web server) can deadlock the child on a lock held at fork time.
    pool = get_context("fork").Pool(workers, initializer=cv2.setNumThreads, initargs=(1,)) \
        if workers > 1 else None
    try:
        mapped = pool.imap(_export_scene, tasks, chunksize=4) if pool else map(_export_scene, tasks)
        for r in tqdm(mapped, total=len(tasks), unit="scene", disable=not progress):
            if "error" in r:
                print(r["error"], file=sys.stderr)
                continue
            results.append(r)
    finally:
        if pool:
            pool.terminate()
    stats: dict[str, Any] = {"seconds": round(time.time() - t0, 1), **opts}
    for split in SPLITS:
        part = [r for r in results if r["split"] == split]
        if not part:
            continue
        crops = np.concatenate([r["crops"] for r in part])
        np.savez_compressed(
            out / "crops" / f"{split}.npz", crops=crops,
            labels=np.concatenate([r["classes"] for r in part]),
            angles=np.concatenate([r["angles"] for r in part]),
            scene=np.concatenate([r["scene"] for r in part]),
            design=np.concatenate([r["design"] for r in part]).astype(str))
        stats[split] = {"scenes": len(part), "tiles": sum(r["tiles"] for r in part),
                        "labels": sum(r["labels"] for r in part), "crops": len(crops)}
    (out / "yolo" / "data.yaml").write_text(
        f"path: {out.resolve() / 'yolo'}\ntrain: images/train\nval: images/val\ntest: images/test\n"
        "names:\n  0: index\n")
    (out / "export.json").write_text(json.dumps(stats, indent=1))
    return stats


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m datasets.export", description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", type=Path, required=True, help="folder of built scenes (python -m datasets.build)")
    ap.add_argument("--out", type=Path, required=True, help="output folder")
    ap.add_argument("--tile", type=int, default=640, help="tile size in px (default 640)")
    ap.add_argument("--long-side", type=int, default=1600, help="photo long side the tiles are cut at (default 1600)")
    ap.add_argument("--scale-jitter", type=float, default=0.25, help="log-uniform jitter of the long side (default 0.25)")
    ap.add_argument("--tiles-per-scene", type=int, default=4)
    ap.add_argument("--min-visible", type=float, default=0.6, help="label indices at least this visible (default 0.6)")
    ap.add_argument("--background-p", type=float, default=0.15, help="share of tiles placed anywhere (default 0.15)")
    ap.add_argument("--crop-size", type=int, default=CROP_SIZE, help=f"classifier crop size (default {CROP_SIZE}, the runtime's)")
    ap.add_argument("--crop-margin", type=float, default=CROP_MARGIN, help=f"crop side / box side (default {CROP_MARGIN})")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if args.tile < 32 or args.long_side < args.tile:
        print("error: need --tile >= 32 and --long-side >= --tile", file=sys.stderr)
        return 2
    if not args.scenes.is_dir():
        print(f"error: {args.scenes} is not a folder", file=sys.stderr)
        return 2
    stats = export(args.scenes, args.out, args.tile, args.long_side, args.scale_jitter, args.tiles_per_scene,
                   args.min_visible, args.background_p, args.crop_size, args.crop_margin, args.seed,
                   args.workers, progress=not args.no_progress)
    print(json.dumps({k: v for k, v in stats.items() if k in SPLITS or k == "seconds"}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
