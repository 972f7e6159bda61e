"""Unsure corners lifted where they look like the photo's sure corners of their rank."""

from __future__ import annotations

import cv2
import numpy as np

from scanner.classes import CLASS_ID
from scanner.corners import Corners
from scanner.likeness import LIKENESS_LIFT, lift_lookalikes

PAPER = 235
TILE_W, TILE_H = 26, 40


def _tile(glyph: str, seed: int) -> np.ndarray:
    """An index: a rank glyph over a suit mark on paper, with a little sensor noise."""
    tile = np.full((TILE_H, TILE_W, 3), PAPER, np.uint8)
    cv2.putText(tile, glyph, (3, 22), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (30, 30, 30), 2)
    cv2.circle(tile, (TILE_W // 2, 32), 4, (30, 30, 30), -1)
    noise = np.random.default_rng(seed).normal(0, 3, tile.shape)
    return np.clip(tile + noise, 0, 255).astype(np.uint8)


def _table():
    """A photo of indices and the corners a detector read on them, with what each is."""
    rgb = np.full((300, 640, 3), PAPER, np.uint8)
    # (glyph printed, its noise, x, y, turned clockwise, rank read, confidence, reading)
    rows = [("7", k, 20 + 50 * k, 20, False, "7", 0.9, 0.95) for k in range(4)]
    rows += [("4", 4 + k, 20 + 50 * k, 100, False, "4", 0.9, 0.95) for k in range(3)]
    rows += [("7", 7, 300, 20, False, "7", 0.3, 0.6),   # 7: unsure, looks like the 7s: lifted
             ("4", 4, 300, 100, False, "7", 0.3, 0.6),  # 8: read 7, the very print of a 4: kept
             ("", 9, 400, 20, False, "7", 0.3, 0.6),    # 9: blank paper: kept
             ("7", 10, 400, 100, True, "7", 0.3, 0.6),  # 10: a 7 turned a quarter: lifted
             ("4", 11, 220, 20, False, "7", 0.9, 0.95)]  # 11: a 4 surely misread as a 7
    boxes, ids, conf, reading, angle = [], [], [], [], []
    for glyph, seed, x, y, turned, rank, c, r in rows:
        tile = _tile(glyph, seed) if glyph else np.full((TILE_H, TILE_W, 3), PAPER, np.uint8)
        if turned:  # its card's top points right
            tile = np.ascontiguousarray(np.rot90(tile, -1))
        h, w = tile.shape[:2]
        rgb[y:y + h, x:x + w] = tile
        boxes.append([x, y, x + w, y + h])
        ids.append(CLASS_ID[rank])
        conf.append(c)
        reading.append(r)
        angle.append(90.0 if turned else 0.0)
    # 12: a second, unsure box on the first sure 7's index: not a card of its own
    boxes.append([24, 24, 24 + TILE_W, 24 + TILE_H])
    ids.append(CLASS_ID["7"])
    conf.append(0.3)
    reading.append(0.6)
    angle.append(0.0)
    return rgb, Corners(np.array(boxes, float), ids, conf, angle, reading)


def test_unsure_corners_that_look_like_their_ranks_print_are_lifted():
    """Corner 8 looks like a 7 (the misread 4 among the 7s) but more like the 4s: kept."""
    rgb, corners = _table()
    lifted = lift_lookalikes(corners, rgb)
    raised = set(np.flatnonzero(lifted.confidence > corners.confidence).tolist())
    assert raised == {7, 10}
    assert np.allclose(lifted.confidence[[7, 10]], LIKENESS_LIFT)
    # everything else as read, in the same order
    assert np.array_equal(lifted.boxes, corners.boxes)
    assert np.array_equal(lifted.class_ids, corners.class_ids)
    assert np.array_equal(lifted.rank_confidence, corners.rank_confidence)
    assert np.array_equal(np.delete(lifted.confidence, [7, 10]),
                          np.delete(corners.confidence, [7, 10]))


def test_the_photo_may_be_decoded_smaller_than_its_corners():
    """Corners are in photo pixels; `scale` maps them onto a reduced decode."""
    rgb, corners = _table()
    half = cv2.resize(rgb, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    big = cv2.resize(half, None, fx=2.0, fy=2.0, interpolation=cv2.INTER_LINEAR)
    assert np.array_equal(lift_lookalikes(corners, half, 0.5).confidence,
                          lift_lookalikes(corners, big).confidence)


def test_nothing_is_lifted_without_sure_examples_or_print():
    rgb, corners = _table()
    unsure = Corners(corners.boxes, corners.class_ids, np.minimum(corners.confidence, 0.3),
                     corners.angle, corners.rank_confidence)
    assert np.array_equal(lift_lookalikes(unsure, rgb).confidence, unsure.confidence)
    blank = np.full_like(rgb, PAPER)
    assert np.array_equal(lift_lookalikes(corners, blank).confidence, corners.confidence)
    assert len(lift_lookalikes(Corners.empty(), rgb)) == 0


def test_corners_under_the_floor_are_left_as_they_are():
    """The scan asks the detector for corners from its floor; under it none are lifted."""
    rgb, corners = _table()
    assert np.array_equal(lift_lookalikes(corners, rgb, floor=0.35).confidence,
                          corners.confidence)
    assert np.allclose(lift_lookalikes(corners, rgb, floor=0.3).confidence[[7, 10]],
                       LIKENESS_LIFT)
