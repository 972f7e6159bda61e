"""Reader crops of datasets.train_classifier: the crop geometry is an option, and a cache
cut with one geometry is never read as another."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from magenta_deck import GEOM, synthetic_bank

from datasets import build, train_classifier
from datasets.scene import SceneParams
from scanner.detector import CROP_MARGIN, CROP_SIZE


def _magenta_scene(tmp_path: Path) -> Path:
    build._WORKER.update(bank=synthetic_bank(), params=SceneParams(megapixels=(2.0, 2.4), closeup_p=0.0),
                         designs={"train": {"magenta": GEOM}, "test": {}})
    scenes = tmp_path / "scenes"
    build.build_one(3, 0, scenes)
    return next((scenes / "train").glob("*.json"))


def _magenta_share(crops: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per index crop: the fraction of its pixels that are the magenta print."""
    c = crops[labels != train_classifier.NONE_ID].astype(int)
    magenta = (c[..., 0] > 150) & (c[..., 2] > 150) & (c[..., 1] < 110)
    return magenta.mean(axis=(1, 2))


def test_crops_take_the_asked_size_and_margin(tmp_path: Path):
    scene = _magenta_scene(tmp_path)
    args = (str(scene), 1, 0.5, 0, 0.0)
    near, labels = train_classifier._scene_crops(args + (CROP_SIZE, CROP_MARGIN))[:2]
    wide, labels_w = train_classifier._scene_crops(args + (48, 2.0))[:2]
    assert near.shape[1:] == (CROP_SIZE, CROP_SIZE, 3) and wide.shape[1:] == (48, 48, 3)
    assert (labels == labels_w).all() and (labels != train_classifier.NONE_ID).sum() > 5
    # the print fills less of a wider crop (more of the card and table around it)
    assert np.median(_magenta_share(wide, labels)) < 0.8 * np.median(_magenta_share(near, labels))


def test_a_cache_of_another_crop_geometry_is_refused(tmp_path: Path):
    cache = tmp_path / "crops"
    train_classifier.check_cache_geometry(cache, 48, 1.7)  # a new cache records its geometry
    assert json.loads((cache / "geometry.json").read_text()) == {"crop_size": 48, "crop_margin": 1.7}
    train_classifier.check_cache_geometry(cache, 48, 1.7)
    with pytest.raises(SystemExit, match="48 px at 1.7x"):
        train_classifier.check_cache_geometry(cache, CROP_SIZE, CROP_MARGIN)


def test_an_unrecorded_cache_is_the_old_geometry(tmp_path: Path):
    cache = tmp_path / "crops"
    cache.mkdir()
    (cache / "train.npz").write_bytes(b"")  # cut before the geometry was recorded
    train_classifier.check_cache_geometry(cache, CROP_SIZE, CROP_MARGIN)
    with pytest.raises(SystemExit, match=f"{CROP_SIZE} px at {CROP_MARGIN}x"):
        train_classifier.check_cache_geometry(cache, 48, 1.7)
