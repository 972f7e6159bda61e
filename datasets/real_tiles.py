"""Detector tiles from real phone photos, labelled by the shipped model and the photos' card labels.

The real photos in `../shared/data/real-photos/edje-pinochle` carry card-level boxes with
the rank only, not index boxes, so they cannot train the index detector as they are. The
shipped detector, run with a very low threshold, finds nearly every index on them but
scores many under its gate (the measured misses on the calibration photos: a right-rank
index scored 0.05-0.3, read by the reader with 0.8-1.0 rank probability). An index box the
detector proposes becomes a label when its centre lies in a card box whose human rank is
the rank the reader reads there: the human label checks each proposal, so the net learns
the real domain from its own near-misses without learning its own mistakes.

Only the train folder is used, and of it only the photos the gate is *not* calibrated on
(every third photo, `photos[::3]`, is kept out: `bench/bench_detector.py --real-step 3`
calibrates on them). The test folder is never read.

    .venv-train/bin/python -m datasets.real_tiles --out build/real-tiles
    .venv-train/bin/python -m datasets.train ... --extra-train build/real-tiles/train/images
"""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

REAL = Path("/work/shared/data/real-photos/edje-pinochle/images/train")
RANKS = {"nine": "9", "ten": "10", "jack": "J", "queen": "Q", "king": "K", "ace": "A"}
MIN_DET_SCORE = 0.08   # detector score (before the rank probability) of a proposal kept
MIN_RANK_PROB = 0.5    # the reader must read the card's labelled rank at least this surely
SCALE_RANGE = (0.8, 1.6)  # tiles are cut at the runtime scale times this (indices 16-65 px)
CALIBRATION_STEP = 3   # photos[::3] calibrate the gate: never trained on


def card_labels(xml_path: Path) -> list[tuple[str, tuple[float, float, float, float]]]:
    """(rank, xyxy box) of each labelled card of a photo."""
    root = ET.parse(xml_path).getroot()
    out = []
    for obj in root.iter("object"):
        bb = obj.find("bndbox")
        box = tuple(float(bb.findtext(k)) for k in ("xmin", "ymin", "xmax", "ymax"))
        out.append((RANKS[obj.findtext("name", "").strip().lower()], box))
    return out


def pseudo_labels(corners, cards: list[tuple[str, tuple]]) -> np.ndarray:
    """Index boxes (K,4) confirmed by a card label of the same rank around their centre."""
    det_score = corners.confidence / np.maximum(corners.rank_confidence, 1e-6)
    keep = []
    for i, ((cx, cy), rank) in enumerate(zip(corners.centers, corners.ranks, strict=True)):
        if det_score[i] < MIN_DET_SCORE or corners.rank_confidence[i] < MIN_RANK_PROB:
            continue
        if any(r == rank and x1 <= cx <= x2 and y1 <= cy <= y2 for r, (x1, y1, x2, y2) in cards):
            keep.append(i)
    # One index, one label: the runtime's NMS keeps a rank-only box inside a rank+suit
    # box (their IoU is low); of boxes mostly inside one another the surest stays.
    keep.sort(key=lambda i: -det_score[i])
    chosen: list[int] = []
    boxes = corners.boxes
    for i in keep:
        if all(_overlap_of_smaller(boxes[i], boxes[j]) < 0.5 for j in chosen):
            chosen.append(i)
    return boxes[chosen].reshape(-1, 4)


def _overlap_of_smaller(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection area over the smaller box's area."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return float(w * h / max(smaller, 1e-6))


def is_test_folder(folder: Path) -> bool:
    """Whether `folder` lies in a test folder (any part of its path named test): never
    trained on."""
    return "test" in Path(folder).parts


def training_photos(folder: Path) -> list[Path]:
    """The train folder's photos minus the calibration ones (every third, sorted)."""
    photos = sorted(p for p in folder.iterdir() if p.suffix.lower() in (".jpg", ".jpeg", ".png"))
    calibration = set(photos[::CALIBRATION_STEP])
    return [p for p in photos if p not in calibration and p.with_suffix(".xml").is_file()]


def cut_tiles(rgb: np.ndarray, boxes: np.ndarray, tile: int, n: int,
              rng: np.random.Generator) -> list[tuple[np.ndarray, list[str]]]:
    """`n` tiles (tile x tile, RGB) with YOLO label lines, at jittered scales."""
    import cv2

    from datasets.train import tile_origin, yolo_lines

    out = []
    h, w = rgb.shape[:2]
    for _ in range(n):
        s = float(rng.uniform(*SCALE_RANGE))
        img = cv2.resize(rgb, (max(1, round(w * s)), max(1, round(h * s))),
                         interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR)
        sb = boxes * s
        ih, iw = img.shape[:2]
        if ih < tile or iw < tile:
            img = cv2.copyMakeBorder(img, 0, max(0, tile - ih), 0, max(0, tile - iw),
                                     cv2.BORDER_CONSTANT, value=(114, 114, 114))
            ih, iw = img.shape[:2]
        x0, y0 = tile_origin(sb, tile, iw, ih, rng)
        out.append((img[y0:y0 + tile, x0:x0 + tile], yolo_lines(sb, x0, y0, tile)))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--real", type=Path, default=REAL, help="the real photos' train folder")
    ap.add_argument("--models", type=Path, default=None, help="detector proposing the boxes")
    ap.add_argument("--out", type=Path, default=Path("build/real-tiles"))
    ap.add_argument("--tiles-per-photo", type=int, default=6)
    ap.add_argument("--tile", type=int, default=320)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if is_test_folder(args.real):
        print("refusing to build training tiles from a test folder", file=sys.stderr)
        return 2
    import cv2

    from scanner.detector import MODELS_DIR, OnnxDetector, detect_corners

    detector = OnnxDetector(args.models or MODELS_DIR, conf=0.05, min_confidence=0.0)
    (args.out / "train" / "images").mkdir(parents=True, exist_ok=True)
    (args.out / "train" / "labels").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    photos = training_photos(args.real)
    n_tiles = n_labels = n_cards = 0
    for p in photos:
        corners, photo = detect_corners(p, detector)
        cards = card_labels(p.with_suffix(".xml"))
        boxes = pseudo_labels(corners, cards)
        n_cards += len(cards)
        n_labels += len(boxes)
        for t, (crop, lines) in enumerate(cut_tiles(photo.rgb, boxes * photo.scale, args.tile,
                                                    args.tiles_per_photo, rng)):
            name = f"real_{p.stem}_{t}"
            cv2.imwrite(str(args.out / "train" / "images" / f"{name}.jpg"),
                        cv2.cvtColor(crop, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 92])
            (args.out / "train" / "labels" / f"{name}.txt").write_text("\n".join(lines))
            n_tiles += 1
    stats = {"photos": len(photos), "cards": n_cards, "index_labels": n_labels, "tiles": n_tiles,
             "min_det_score": MIN_DET_SCORE, "min_rank_prob": MIN_RANK_PROB, "seed": args.seed}
    (args.out / "stats.json").write_text(json.dumps(stats, indent=1))
    print(json.dumps(stats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
