"""bench.bench_designs: per-design recall over cached corners, each photo's own."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from bench.bench_designs import main, recall_by_design
from bench.bench_layout import cache_name
from scanner.classes import CLASS_ID


def _scene(folder: Path, design: str, photo_bytes: bytes) -> Path:
    """A scene of one 7 of `design` with one readable index at (10, 10, 30, 40)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "scene_000009.jpg").write_bytes(photo_bytes)
    scene = {"image": {"file": "scene_000009.jpg", "width": 100, "height": 100},
             "cards": [{"card": "7H", "design": design, "face_up": True,
                        "indices": [{"box": [10, 10, 30, 40], "visible": 1.0, "angle": 0.0}]}]}
    (folder / "scene_000009.json").write_text(json.dumps(scene))
    return folder / "scene_000009.jpg"


def _cache(cache: Path, photo: Path, boxes: list[list[float]]) -> None:
    cache.mkdir(parents=True, exist_ok=True)
    n = len(boxes)
    np.savez(cache / cache_name(photo), boxes=np.array(boxes, np.float32).reshape(-1, 4),
             class_ids=np.full(n, CLASS_ID["7"]), confidence=np.full(n, 0.9, np.float32),
             angle=np.zeros(n, np.float32), rank_confidence=np.full(n, 0.9, np.float32))


def test_recall_counts_each_folders_own_photos_though_folders_share_names(tmp_path: Path,
                                                                              capsys) -> None:
    # two builds' test folders, both with a scene_000009: one cache holds both photos' corners
    a = _scene(tmp_path / "t3" / "test", "alpha", b"photo a")
    b = _scene(tmp_path / "t4" / "test", "beta", b"photo b")
    cache = tmp_path / "cache"
    _cache(cache, a, [[10, 10, 30, 40]])  # found
    _cache(cache, b, [])  # missed
    assert recall_by_design(cache, a.parent)["alpha"]["recall_iou50"] == 1.0
    beta = recall_by_design(cache, b.parent)
    assert list(beta) == ["beta"] and beta["beta"]["recall_iou50"] == 0.0
    assert main([str(cache), str(tmp_path / "nowhere")]) == 2
    assert "no cached corners" in capsys.readouterr().out
