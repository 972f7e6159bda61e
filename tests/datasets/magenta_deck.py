"""A synthetic deck for the data-engine tests: white cards whose index boxes are solid
magenta exactly where their CardGeometry says, so a test can check labels against pixels
without any installed card art."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from datasets.render import ArtBank
from datasets.scene import CardGeometry, SceneParams

GEOM = CardGeometry(aspect=0.7, index_box=(0.04, 0.03, 0.19, 0.27), index_corners=("tl", "br"))
TOKENS = [r + s for s in "SHDC" for r in ("A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "3", "2")]
TOKENS += ["JK_red", "JK_black", "back"]
MAGENTA = np.array([255, 0, 255])


def _synthetic_faces(h: int = 200) -> np.ndarray:
    w = round(h * GEOM.aspect)
    card = np.zeros((h, w, 4), np.uint8)
    card[:, :, :3] = 245
    card[:, :, 3] = 255
    x1, y1, x2, y2 = GEOM.index_box
    for bx1, by1, bx2, by2 in ((x1, y1, x2, y2), (1 - x2, 1 - y2, 1 - x1, 1 - y1)):
        card[round(by1 * h):round(by2 * h), round(bx1 * w):round(bx2 * w), :3] = MAGENTA
    card[round(0.35 * h):round(0.65 * h), round(0.3 * w):round(0.7 * w), :3] = (30, 60, 200)
    back = card.copy()
    back[:, :, :3] = (40, 40, 160)
    return np.stack([card] * (len(TOKENS) - 1) + [back])


def synthetic_bank() -> ArtBank:
    bank = ArtBank({"magenta": {"tokens": TOKENS, "split": "train"}})
    bank._faces["magenta"] = _synthetic_faces()
    return bank


def magenta_share(img: np.ndarray, line: str, size: int) -> float:
    """Share of magenta pixels in the middle third of a YOLO label's box (img is BGR, as on disk)."""
    _, cx, cy, w, h = (float(v) for v in line.split())
    cx, cy, w, h = cx * size, cy * size, w * size, h * size
    patch = img[int(cy - h / 6): int(cy + h / 6) + 1, int(cx - w / 6): int(cx + w / 6) + 1].astype(int)
    if not patch.size:
        return 0.0
    return float(((patch[..., 2] > patch[..., 1] + 50) & (patch[..., 0] > patch[..., 1] + 50)).mean())


def magenta_scene(tmp_path: Path) -> Path:
    """The JSON of one rendered train scene of the magenta deck (2-2.4 MP, no close-up)."""
    from datasets import build

    build._WORKER.update(bank=synthetic_bank(), params=SceneParams(megapixels=(2.0, 2.4), closeup_p=0.0),
                         designs={"train": {"magenta": GEOM}, "test": {}})
    scenes = tmp_path / "scenes"
    build.build_one(3, 0, scenes)
    return next((scenes / "train").glob("*.json"))
