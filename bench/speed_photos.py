"""The 12-megapixel photos `bench_detector --parts speed` times, made from built test scenes.

`build/i4/speed-12mp.jpg`, the photo every session since session 4 has timed, is test scene
569 of seed 1 resized to 4,032 x 3,024 (bicubic; that scene is upright, so it is squeezed),
Gaussian noise of sigma 3 added (numpy seed 0), saved by Pillow at quality 92. It holds 9
readable corners: a sparse table. Four more of the same seed's test scenes (19, 29, 39, 49:
whole tables of 61-81 cards; 29 and 19 are read by few or small indices) are made the same
way at their own aspect, resized to the same 12.19 megapixels (`speed-12mp-<scene>.jpg`).
Three of them (569, 39, 49) are also written turned a quarter, as if taken from the side of
the table (`side/speed-12mp<-scene>-side.jpg`: the written photo transposed by Pillow's
ROTATE_90 and saved again at quality 92); the upright check turns those back after the
coarse pass and runs both passes on the turned photo (models/MODEL_CARD.md, sessions 38-39).

    python -m datasets.build --scenes 570 --seed 1 --split test --out build/scenes-s1
    python -m bench.speed_photos --scenes build/scenes-s1/test --out build/i4
    python -m bench.bench_detector --parts speed --photo build/i4/speed-12mp*.jpg
    python -m bench.bench_detector --parts speed --photo build/i4/side/*.jpg
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SIZE = (4032, 3024)
SCENES = {569: "speed-12mp.jpg", 19: "speed-12mp-19.jpg", 29: "speed-12mp-29.jpg",
          39: "speed-12mp-39.jpg", 49: "speed-12mp-49.jpg"}
SIDE = (569, 39, 49)  # also written turned a quarter, into `side/`


def speed_photo(scene: Path, out: Path, exact: bool) -> tuple[int, int]:
    """Write `scene`'s photo at 12.19 MP (`SIZE` itself when `exact`) with noise; its size."""
    from PIL import Image

    im = Image.open(scene).convert("RGB")
    if exact:
        size = SIZE
    else:
        s = (SIZE[0] * SIZE[1] / (im.width * im.height)) ** 0.5
        size = (round(im.width * s), round(im.height * s))
    im = im.resize(size, Image.BICUBIC)
    np.random.seed(0)
    noisy = np.asarray(im).astype(np.float32) + np.random.normal(0, 3, (size[1], size[0], 3))
    out.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(noisy.clip(0, 255).round().astype(np.uint8)).save(out, quality=92)
    return size


def side_photo(photo: Path, out: Path) -> tuple[int, int]:
    """Write `photo` turned a quarter counter-clockwise (a photo from the side); its size."""
    from PIL import Image

    turned = Image.open(photo).transpose(Image.Transpose.ROTATE_90)
    out.parent.mkdir(parents=True, exist_ok=True)
    turned.save(out, quality=92)
    return turned.size


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.speed_photos", description=__doc__.splitlines()[0])
    ap.add_argument("--scenes", type=Path, default=ROOT / "build" / "scenes-s1" / "test")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "i4")
    args = ap.parse_args(argv)
    missing = [n for n in SCENES if not (args.scenes / f"scene_{n:06d}.jpg").is_file()]
    if missing:
        print(f"speed_photos: no scene {missing} in {args.scenes}; build them first (see this "
              "module's doc)", file=sys.stderr)
        return 1
    for n, name in SCENES.items():
        size = speed_photo(args.scenes / f"scene_{n:06d}.jpg", args.out / name, exact=n == 569)
        print(f"{args.out / name}: {size[0]} x {size[1]}")
        if n in SIDE:
            side = args.out / "side" / name.replace(".jpg", "-side.jpg")
            size = side_photo(args.out / name, side)
            print(f"{side}: {size[0]} x {size[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
