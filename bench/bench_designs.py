"""Index recall per card design, from the detector corners `bench_layout` cached.

`bench_layout --source detector --corners-cache DIR` keeps each photo's corners under
DIR/<model hash>/; this matches them to the scene JSONs' readable indices (visible >= 0.6)
and reports, per design, the share with a detected box of IoU >= 0.5 and the share with a
box centre inside the true box; and of the indices found with their rank (a corner of
confidence >= 0.25 and IoU >= 0.3), the share whose direction is read more than 30 degrees
off, overall and per rank (a card placed turned lands in the wrong stack).

    python -m bench.bench_designs build/corner-cache/<hash> build/scenes-t3/test
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from bench.bench_layout import cache_name
from datasets.groundtruth import rank_class
from scanner.classes import CLASS_ID
from scanner.detector import box_iou

# a found index's direction is "off" when read more than this many degrees from the truth
ANGLE_OFF = 30.0


def _cached(cache: Path, scenes: Path) -> list[tuple[dict, Path]]:
    """Each scene of `scenes` whose photo has corners in `cache`, with their file: found by the
    photo's bytes (`bench_layout.cache_name`), since scene folders of different builds share
    names (every build has a `test/scene_000009.jpg`) and one cache holds them all; the
    photo as shot only (a turned photo's or a seat's corners lie elsewhere)."""
    out = []
    for js in sorted(scenes.glob("scene_*.json")):
        scene = json.loads(js.read_text())
        photo = scenes / scene.get("image", {}).get("file", "")
        if photo.is_file() and (cache / (name := cache_name(photo))).is_file():
            out.append((scene, cache / name))
    return out


def recall_by_design(cache: Path, scenes: Path, min_visible: float = 0.6) -> dict[str, dict]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    # per design and rank: found with their rank, of them read off
    turned: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for scene, f in _cached(cache, scenes):
        with np.load(f) as z:
            boxes, class_ids = z["boxes"], z["class_ids"]
            confidence, angle = z["confidence"], z["angle"]
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
                    overlap = box_iou(b, boxes)
                    c[1] += bool(overlap.max() >= 0.5)
                    c[2] += bool(((centres >= b[:2]) & (centres <= b[2:])).all(axis=1).any())
                    rank = rank_class(card["card"])
                    hit = (overlap >= 0.3) & (class_ids == CLASS_ID[rank]) & (confidence >= 0.25)
                    if hit.any() and "angle" in ind:
                        best = int(np.flatnonzero(hit)[np.argmax(confidence[hit])])
                        off = abs((float(angle[best]) - ind["angle"] + 180.0) % 360.0 - 180.0)
                        t = turned[card["design"]][rank]
                        t[0] += 1
                        t[1] += off > ANGLE_OFF
    out = {}
    for d, (n, a, i) in sorted(counts.items()):
        found = sum(t[0] for t in turned[d].values())
        off = sum(t[1] for t in turned[d].values())
        out[d] = {"indices": n, "recall_iou50": round(a / n, 3), "centre_inside": round(i / n, 3),
                  "angle_off_30": round(off / max(found, 1), 3),
                  # ranks with 20 or more found indices, read off more than 5% of the time
                  "angle_off_30_by_rank": {r: round(t[1] / t[0], 3) for r, t in
                                           sorted(turned[d].items())
                                           if t[0] >= 20 and t[1] > 0.05 * t[0]}}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cache", type=Path, help="build/corner-cache/<model hash>")
    ap.add_argument("scenes", type=Path, help="the scene folder the corners were cached from")
    args = ap.parse_args(argv)
    found = recall_by_design(args.cache, args.scenes)
    if not found:
        print(f"no cached corners for {args.scenes.name} in {args.cache}")
        return 2
    print(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
