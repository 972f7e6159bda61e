"""How the 6/9 reader tells a 6 from a 9, per card design, on the true index boxes.

A bare 6 turned over is a 9, so the runtime settles every corner first read as one of the
two with the 6/9 reader (`sixnine.onnx`, a crop 3x the box, four quarter turns averaged;
`OnnxDetector._six_or_nine`). This cuts that crop around every true 6 and 9 index of the
scenes (visible >= 0.6), from the photo decoded as `scan` decodes it, and reports the share
the reader gives to the right one of the two (its 9-share over or under half), overall and
per design. No detector runs, so it measures the reader alone, in seconds.

    python -m bench.bench_sixnine --models models --scenes build/scenes-t3/test
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from scanner.classes import INDEX_CLASSES
from scanner.detector import OnnxDetector
from scanner.imageio import load_photo

MIN_VISIBLE = 0.6


def nine_shares(detector: OnnxDetector, rgb: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """The 6/9 reader's share of 9 (against 6) for each box (`rgb` pixels), four turns averaged."""
    mean, _ = detector.six_nine_views(rgb, boxes)
    six, nine = INDEX_CLASSES.index("6"), INDEX_CLASSES.index("9")
    return mean[:, nine] / np.maximum(mean[:, six] + mean[:, nine], 1e-6)


def evaluate(detector: OnnxDetector, scenes: Path, limit: int | None = None) -> dict:
    """Right / total per design over the scenes' true 6 and 9 indices."""
    right, total = Counter(), Counter()
    for f in sorted(scenes.glob("scene_*.json"))[:limit]:
        scene = json.loads(f.read_text())
        items = [(c["design"], c["rank"], ix["box"]) for c in scene["cards"]
                 if c["rank"] in ("6", "9") and c["face_up"]
                 for ix in c["indices"] if ix["visible"] >= MIN_VISIBLE]
        photo_path = f.parent / scene["image"]["file"]
        if not items or not photo_path.is_file():
            continue
        photo = load_photo(photo_path, long_side=detector.decode_long_side)
        boxes = np.array([b for _, _, b in items], np.float32) * photo.scale
        for (design, rank, _), share in zip(items, nine_shares(detector, photo.rgb, boxes),
                                            strict=True):
            total[design] += 1
            right[design] += bool(share > 0.5) == (rank == "9")
    n = sum(total.values())
    return {"indices": n, "right": sum(right.values()) / max(n, 1),
            "per_design": {d: {"indices": total[d], "right": round(right[d] / total[d], 4)}
                           for d in sorted(total)}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.bench_sixnine", description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", type=Path, default=None, help="model folder (default: the bundled models/)")
    ap.add_argument("--scenes", type=Path, required=True, help="folder of scene_*.json with their photos")
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args(argv)
    if not args.scenes.is_dir():
        print(f"bench_sixnine: {args.scenes} is not a folder", file=sys.stderr)
        return 2
    detector = OnnxDetector(args.models) if args.models else OnnxDetector()
    if detector._sn is None:
        print("bench_sixnine: the model folder has no 6/9 reader", file=sys.stderr)
        return 2
    print(json.dumps({"models": str(args.models or "models"), "scenes": str(args.scenes),
                      **evaluate(detector, args.scenes, args.limit)}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
