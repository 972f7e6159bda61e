"""Ink colour (red or black) of printed indices: how often `scanner.ink` reads it right.

Over the whole indices (fully visible) of the meld and red-three cards of rendered scenes,
cut at their ground-truth boxes: the share read right among those it decides, the share
it leaves unsure, per design, at the shipped thresholds (`RED_INK`, `BLACK_INK`) and,
with `--sweep`, for one threshold at each value (nothing unsure). Jokers have no suit
and are left out.

    python bench/bench_ink.py --scenes-dir build/scenes/train --limit 150 --sweep 0.1,0.15,0.2,0.25,0.3
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from datasets.scene import RED_SUITS  # noqa: E402
from scanner.imageio import load_photo  # noqa: E402
from scanner.ink import BLACK_INK, RED_INK, ink_colour, ink_redness  # noqa: E402

ROLES = ("meld", "squared_top", "red_three")


def measure(scenes_dir: Path, limit: int) -> list[tuple[str, bool, float]]:
    """(design, is red, ink redness) of every whole index of the scenes' meld cards."""
    rows = []
    for f in sorted(scenes_dir.glob("scene_*.json"))[: limit or None]:
        scene = json.loads(f.read_text())
        photo = load_photo(f.with_name(scene["image"]["file"]))
        for card in scene["cards"]:
            if card["role"] not in ROLES or card["card"].startswith("JK"):
                continue
            boxes = [ix["box"] for ix in card["indices"] if ix["visible"] >= 0.99]
            if not boxes:
                continue
            red = card["card"][-1] in RED_SUITS
            for r in ink_redness(photo.rgb, np.asarray(boxes) * photo.scale):
                rows.append((card["design"], red, float(r)))
    return rows


def summary(rows: list[tuple[str, bool, float]], red_at: float, black_at: float) -> dict:
    said = [ink_colour(r[2], red_at, black_at) for r in rows]
    decided = np.array([c is not None for c in said])
    right = np.array([c == ("red" if r[1] else "black") for c, r in zip(said, rows, strict=True)])
    return {"indices": len(rows), "unsure": round(float(1 - decided.mean()), 4),
            "right_of_decided": round(float(right[decided].mean()), 4) if decided.any() else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenes-dir", type=Path, required=True)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--sweep", default="", help="single thresholds to report, e.g. 0.15,0.2")
    args = ap.parse_args(argv)
    rows = measure(args.scenes_dir, args.limit)
    if not rows:
        print(f"no scenes with whole indices in {args.scenes_dir}", file=sys.stderr)
        return 2
    per_design = defaultdict(list)
    for row in rows:
        per_design[row[0]].append(row)
    out = {"scenes_dir": str(args.scenes_dir), "red_ink": RED_INK, "black_ink": BLACK_INK,
           **summary(rows, RED_INK, BLACK_INK),
           "per_design": {d: summary(r, RED_INK, BLACK_INK) for d, r in sorted(per_design.items())},
           "single_threshold": {t: summary(rows, float(t), float(t))["right_of_decided"]
                                for t in args.sweep.split(",") if t}}
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
