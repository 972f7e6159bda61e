"""Box-refiner crops of datasets.train_boxes: the target box of each crop is where the
printed index is in it, whichever way the crop is turned."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from magenta_deck import magenta_scene

from datasets import train_boxes


def _magenta_inside(crop: np.ndarray, box: np.ndarray) -> float:
    """Share of magenta pixels inside a crop-coordinate box (its middle, away from the
    edges the resize blurs)."""
    size = crop.shape[0]
    x1, y1, x2, y2 = box * size
    dx, dy = (x2 - x1) / 6, (y2 - y1) / 6
    patch = crop[max(int(y1 + dy), 0):int(y2 - dy) + 1, max(int(x1 + dx), 0):int(x2 - dx) + 1].astype(int)
    if not patch.size:
        return 0.0
    return float(((patch[..., 0] > 150) & (patch[..., 2] > 150) & (patch[..., 1] < 110)).mean())


def test_targets_sit_on_the_print_not_on_the_jittered_box(tmp_path: Path):
    crops, targets = train_boxes._scene_box_crops((str(magenta_scene(tmp_path)), 2, 0, 0.0, 0.0, 0.0))
    assert crops.shape[1:] == (train_boxes.CROP_SIZE,) * 2 + (3,) and len(crops) == len(targets) > 10
    inside = np.array([_magenta_inside(c, t) for c, t in zip(crops, targets, strict=True)])
    assert np.median(inside) > 0.9
    # another crop's target (a box where this crop's print is not) is mostly not magenta
    other = np.array([_magenta_inside(c, t) for c, t in zip(crops, np.roll(targets, 1, axis=0), strict=True)])
    assert np.median(other) < np.median(inside) - 0.2
    # the boxes were jittered: the crop's own middle (the given box) is not the target
    lo, hi = 0.5 - 0.5 / train_boxes.CROP_MARGIN, 0.5 + 0.5 / train_boxes.CROP_MARGIN
    given = np.tile(np.float32([lo, lo, hi, hi]), (len(targets), 1))
    assert np.median(np.abs(targets - given).max(axis=1)) > 0.02


def test_targets_turn_with_their_crops():
    size = 48
    box = np.float32([[0.15, 0.3, 0.45, 0.9]])
    crop = np.zeros((size, size), np.uint8)
    x1, y1, x2, y2 = (box[0] * size).round().astype(int)
    crop[y1:y2, x1:x2] = 1
    for k in range(4):
        turned = np.rot90(crop, k)
        ys, xs = np.nonzero(turned)
        seen = np.float32([xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]) / size
        got = train_boxes.turn_targets(box, np.array([k]))[0]
        assert np.allclose(got, seen, atol=1.5 / size), (k, got, seen)
    assert np.allclose(train_boxes.turn_targets(box, np.array([0])), box)  # given box untouched


def test_crops_from_a_seat_keep_their_targets_on_the_print(tmp_path: Path):
    scene = str(magenta_scene(tmp_path))
    plain, _ = train_boxes._scene_box_crops((scene, 1, 0, 0.0, 0.0, 0.0))
    crops, targets = train_boxes._scene_box_crops((scene, 1, 0, 0.0, 0.0, 1.0))
    assert len(crops) == len(plain) > 10
    assert np.abs(crops.astype(int) - plain.astype(int)).mean() > 5  # the photo was warped
    # the moved labels still box the print (the bounds of a slanted quad hold some paper)
    inside = np.array([_magenta_inside(c, t) for c, t in zip(crops, targets, strict=True)])
    whole = np.array([_magenta_inside(c, np.float32([0, 0, 1, 1])) for c in crops])
    assert np.median(inside) > 0.7 and np.median(inside - whole) > 0.3


def test_refined_boxes_are_scored_row_by_row():
    a = np.float32([[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 2, 1], [5, 5, 6, 6], [0, 0, 1, 1]])
    b = np.float32([[0, 0, 1, 1], [2, 2, 3, 3], [0, 0, 1, 1], [5, 5, 6, 6], [0.5, 0, 1.5, 1]])
    assert np.allclose(train_boxes.paired_iou(a, b), [1.0, 0.0, 0.5, 1.0, 1 / 3])
