"""Exports: YOLO tiles whose labels sit on the (magenta) print, and classifier crops."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from magenta_deck import GEOM, magenta_share, synthetic_bank

from datasets import build, export
from datasets.scene import SceneParams
from scanner.classes import INDEX_CLASSES


def _build(tmp_path: Path) -> Path:
    build._WORKER.update(bank=synthetic_bank(), params=SceneParams(megapixels=(2.0, 2.4), closeup_p=0.0),
                         designs={"train": {"magenta": GEOM}, "test": {}})
    out = tmp_path / "scenes"
    for i in (0, 1, 8, 9):  # train, train, val, test
        build.build_one(3, i, out)
    return out


def test_yolo_tiles_and_crops(tmp_path: Path):
    scenes = _build(tmp_path)
    out = tmp_path / "export"
    stats = export.export(scenes, out, tile=320, long_side=900, tiles_per_scene=3, workers=1, progress=False)
    assert stats["train"]["scenes"] == 2 and stats["val"]["scenes"] == 1 and stats["test"]["scenes"] == 1
    yaml = (out / "yolo" / "data.yaml").read_text()
    assert "train: images/train" in yaml and "0: index" in yaml
    checked = 0
    for img_path in sorted((out / "yolo" / "images").rglob("*.jpg")):
        label_path = out / "yolo" / "labels" / img_path.parent.name / (img_path.stem + ".txt")
        img = cv2.imread(str(img_path))
        assert img.shape == (320, 320, 3)
        for line in label_path.read_text().splitlines():
            cls, cx, cy, w, h = line.split()
            assert cls == "0"
            cx, cy, w, h = (float(v) * 320 for v in (cx, cy, w, h))
            assert 0 <= cx - w / 2 + 1e-3 and cx + w / 2 <= 320 + 1e-3
            # the middle of a readable label is printed magenta (BGR on disk)
            if w > 6 and h > 6:
                assert magenta_share(img, line, 320) > 0.5, (img_path.name, line)
                checked += 1
    assert checked > 30
    crops = np.load(out / "crops" / "train.npz")
    n = len(crops["labels"])
    assert n > 20 and crops["crops"].shape[1:] == (40, 40, 3) and crops["angles"].shape == (n,)
    assert crops["labels"].min() >= 0 and crops["labels"].max() < len(INDEX_CLASSES)
    assert set(crops["design"]) == {"magenta"}
