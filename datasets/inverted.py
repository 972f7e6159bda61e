"""Inverted copies of detector tiles: light indices on dark cards.

One training design, kde-oxygen, prints white indices on dark red and black faces; the
detector trained without this found about half of its indices on val scenes (recall 0.51
at IoU 0.5 on the 11 val scenes with most of them, against 0.83-0.98 for the other
training designs), so one design of that look among 21 is too little to learn that an
index can be light on dark. A share of the existing train tiles is written again with
every pixel inverted (255 - value), under the same labels: the boxes do not move.

    python -m datasets.inverted --src build/yolo-index-v8/train build/yolo-index-r/train \\
        --share 0.1 --seed 12 --out build/yolo-index-inv
    python -m datasets.train ... --extra-train build/yolo-index-inv/images

Each source is a tiles split folder with `images/*.jpg` and `labels/*.txt` (what
`datasets.train` and `datasets.real_tiles` write). Output names are prefixed with the
source's parent folder name, so tiles of two sources never collide.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from PIL import Image


def invert_tiles(sources: list[Path], out: Path, share: float, seed: int,
                 quality: int = 92) -> int:
    """Write inverted copies of about `share` of the tiles in `sources` to `out`; returns
    how many. The pick is a function of `seed` and the sorted tile names only."""
    rng = np.random.default_rng(seed)
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "labels").mkdir(parents=True, exist_ok=True)
    written = 0
    for src in sources:
        images = sorted((src / "images").glob("*.jpg"))
        picked = rng.random(len(images)) < share
        for image, take in zip(images, picked, strict=True):
            if not take:
                continue
            label = src / "labels" / f"{image.stem}.txt"
            name = f"{src.parent.name}-{image.stem}"
            with Image.open(image) as im:
                rgb = np.asarray(im.convert("RGB"))
            Image.fromarray(255 - rgb).save(out / "images" / f"{name}.jpg", quality=quality)
            text = label.read_text() if label.is_file() else ""  # no label file: no index
            (out / "labels" / f"{name}.txt").write_text(text)
            written += 1
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", type=Path, nargs="+", required=True,
                    help="tile split folders, each with images/ and labels/")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--share", type=float, default=0.1, help="share of the tiles to invert")
    ap.add_argument("--seed", type=int, default=12)
    args = ap.parse_args(argv)
    if not 0 < args.share <= 1:
        print(f"--share must be in (0, 1], got {args.share}", file=sys.stderr)
        return 2
    missing = [str(s) for s in args.src if not (s / "images").is_dir()]
    if missing:
        print(f"no images/ folder in {', '.join(missing)}: pass tile split folders "
              "(e.g. build/yolo-index-v8/train)", file=sys.stderr)
        return 2
    n = invert_tiles(args.src, args.out, args.share, args.seed)
    print(f"{n} inverted tiles in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
