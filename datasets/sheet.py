"""Contact sheets and the committed sample scenes: the data at a glance.

`python -m datasets.sheet --scenes build/scenes --out build/sheet.jpg` draws scenes
downsized with their ground truth (readable index boxes green, covered ones red, card
outlines of melds thin white). `python -m datasets.sheet --samples` re-renders the small
sample scenes committed in `datasets/samples/` (CC0 art only: the `letele` design) and
the contact sheet `docs/contact-sheet.jpg` from them.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import cv2
import numpy as np

from datasets import art

SAMPLES_DIR = art.ROOT / "datasets" / "samples"
CONTACT_SHEET = art.ROOT / "docs" / "contact-sheet.jpg"


def draw_ground_truth(rgb: np.ndarray, scene: dict, min_visible: float = 0.6) -> np.ndarray:
    """A copy of the photo with card outlines and index boxes drawn (line width scales)."""
    img = rgb.copy()
    t = max(1, round(max(img.shape[:2]) / 700))
    for card in scene["cards"]:
        if card["role"] in ("meld", "squared_top", "red_three", "discard"):
            cv2.polylines(img, [np.round(card["outline"]).astype(np.int32)], True, (255, 255, 255), t, cv2.LINE_AA)
        for ix in card["indices"]:
            colour = (0, 230, 0) if ix["visible"] >= min_visible else (230, 0, 0)
            cv2.polylines(img, [np.round(ix["quad"]).astype(np.int32)], True, colour, t, cv2.LINE_AA)
    return img


def contact_sheet(json_paths: list[Path], out: Path, cols: int = 3, cell: int = 640,
                  quality: int = 80) -> Path:
    """Tile scenes (with ground truth) into one JPEG, cells `cell` px wide."""
    cells = []
    for jp in json_paths:
        scene = json.loads(jp.read_text())
        bgr = cv2.imread(str(jp.with_name(scene["image"]["file"])))
        if bgr is None:
            raise SystemExit(f"cannot read the image of {jp}")
        drawn = draw_ground_truth(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), scene)
        f = cell / drawn.shape[1]
        small = cv2.resize(drawn, (cell, round(drawn.shape[0] * f)), interpolation=cv2.INTER_AREA)
        cv2.putText(small, f"{jp.stem} {scene['split']} {','.join(scene['designs'])}", (6, 20),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 0), 1, cv2.LINE_AA)
        cells.append(small)
    while len(cells) % cols:
        cells.append(np.zeros((1, cell, 3), np.uint8))
    rows = []
    for i in range(0, len(cells), cols):
        row_h = max(c.shape[0] for c in cells[i:i + cols])
        rows.append(np.hstack([np.pad(c, ((0, row_h - c.shape[0]), (0, 0), (0, 0))) for c in cells[i:i + cols]]))
    sheet = np.vstack(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(out), cv2.cvtColor(sheet, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, quality])
    return out


def make_samples(n: int = 4, seed: int = 2026) -> list[Path]:
    """Render n small sample scenes from CC0 art into datasets/samples/ (replacing old ones)."""
    from datasets import build
    from datasets.scene import SceneParams

    manifest = art.prepare_all(["letele"])
    tmp = art.ROOT / "build" / "samples-tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    params = SceneParams(megapixels=(1.0, 1.3), portrait_p=0.0)
    build._init_worker(manifest, params, ["letele"])
    build._WORKER["designs"]["test"] = build._WORKER["designs"]["train"]  # letele is train-only
    SAMPLES_DIR.mkdir(parents=True, exist_ok=True)
    for old in SAMPLES_DIR.glob("scene_*"):
        old.unlink()
    paths = []
    for i in range(n):
        jp = Path(build.build_one(seed, i, tmp, quality=(80, 80)))
        for suffix in (".json", ".jpg"):
            shutil.copyfile(jp.with_suffix(suffix), SAMPLES_DIR / jp.with_suffix(suffix).name)
        paths.append(SAMPLES_DIR / jp.name)
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m datasets.sheet", description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", type=Path, help="folder of built scenes")
    ap.add_argument("--out", type=Path, help="sheet JPEG to write")
    ap.add_argument("--count", type=int, default=9, help="scenes on the sheet (default 9)")
    ap.add_argument("--samples", action="store_true", help="re-render datasets/samples and docs/contact-sheet.jpg")
    args = ap.parse_args(argv)
    if args.samples:
        paths = make_samples()
        out = contact_sheet(paths, args.out or CONTACT_SHEET, cols=2, cell=560)
        print(f"wrote {len(paths)} samples to {SAMPLES_DIR} and {out}", file=sys.stderr)
        return 0
    if not args.scenes or not args.out:
        ap.error("give --scenes and --out, or --samples")
    files = sorted(args.scenes.rglob("scene_*.json"))
    if not files:
        print(f"error: no scene_*.json under {args.scenes}", file=sys.stderr)
        return 2
    step = max(1, len(files) // args.count)
    contact_sheet(files[::step][: args.count], args.out)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
