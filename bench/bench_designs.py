"""Index recall per card design, from the detector corners `bench_layout` cached.

`bench_layout --source detector --corners-cache DIR` keeps each photo's corners under
DIR/<model hash>/; this matches them to the scene JSONs' readable indices (visible >= 0.6)
and reports, per design, the share with a detected box of IoU >= 0.5 and the share with a
box centre inside the true box.

    python -m bench.bench_designs build/corner-cache/<hash> build/scenes-t3/test
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from scanner.detector import box_iou


def recall_by_design(cache: Path, scenes: Path, min_visible: float = 0.6) -> dict[str, dict]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for f in sorted(cache.glob(f"{scenes.name}-scene_*.npz")):
        if not f.stem.split("_")[-1].isdigit():
            continue  # corners of a turned photo (bench_layout --turn): other boxes
        scene = json.loads((scenes / f"{f.stem.split('-', 1)[1]}.json").read_text())
        with np.load(f) as z:
            boxes = z["boxes"]
        centres = (boxes[:, :2] + boxes[:, 2:]) / 2
        for card in scene["cards"]:
            if not card.get("face_up", True):
                continue
            for ind in card.get("indices", []):
                if ind.get("visible", 1.0) < min_visible:
                    continue
                c = counts[card["design"]]
                c[0] += 1
                if len(boxes):
                    b = np.asarray(ind["box"])
                    c[1] += bool(box_iou(b, boxes).max() >= 0.5)
                    c[2] += bool(((centres >= b[:2]) & (centres <= b[2:])).all(axis=1).any())
    return {d: {"indices": n, "recall_iou50": round(a / n, 3), "centre_inside": round(i / n, 3)}
            for d, (n, a, i) in sorted(counts.items())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cache", type=Path, help="build/corner-cache/<model hash>")
    ap.add_argument("scenes", type=Path, help="the scene folder the corners were cached from")
    args = ap.parse_args(argv)
    if not any(args.cache.glob(f"{args.scenes.name}-scene_*.npz")):
        print(f"no cached corners for {args.scenes.name} in {args.cache}")
        return 2
    print(json.dumps(recall_by_design(args.cache, args.scenes), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
