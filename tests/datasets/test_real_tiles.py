"""Real-photo tiles: only proposals a human card label confirms become labels, once each."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from datasets import real_tiles
from scanner.classes import CLASS_ID
from scanner.corners import Corners


def _corners(rows: list[tuple[tuple[float, float, float, float], str, float, float]]) -> Corners:
    """rows: (box, rank, detector score, rank probability)."""
    boxes = [r[0] for r in rows]
    det = np.array([r[2] for r in rows])
    prob = np.array([r[3] for r in rows])
    return Corners(boxes, [CLASS_ID[r[1]] for r in rows], det * prob, np.zeros(len(rows)), prob)


CARDS = [("K", (100.0, 100.0, 200.0, 250.0)), ("9", (300.0, 100.0, 400.0, 250.0))]


def test_a_proposal_needs_the_labelled_rank_around_it():
    corners = _corners([
        ((105, 105, 120, 130), "K", 0.15, 0.95),   # right rank in the K card: kept
        ((305, 105, 320, 130), "K", 0.60, 0.95),   # a K read inside the 9 card: a misread
        ((500, 105, 515, 130), "9", 0.60, 0.95),   # outside every card
        ((380, 220, 395, 245), "9", 0.05, 0.95),   # too faint a proposal
        ((380, 180, 395, 205), "9", 0.50, 0.30),   # rank read unsurely
    ])
    boxes = real_tiles.pseudo_labels(corners, CARDS)
    assert boxes.tolist() == [[105, 105, 120, 130]]


def test_one_index_one_label():
    # a rank-only box inside a rank+suit box (low IoU, so NMS kept both): the surer stays
    corners = _corners([
        ((105, 105, 120, 125), "K", 0.20, 0.95),
        ((104, 104, 121, 140), "K", 0.40, 0.95),
        ((180, 225, 195, 245), "K", 0.10, 0.95),   # the card's other index: kept too
    ])
    boxes = real_tiles.pseudo_labels(corners, CARDS)
    assert sorted(boxes.tolist()) == [[104, 104, 121, 140], [180, 225, 195, 245]]


def test_calibration_photos_are_never_trained_on(tmp_path: Path):
    for i in range(9):
        (tmp_path / f"IMG_{i}.JPG").write_bytes(b"")
        (tmp_path / f"IMG_{i}.xml").write_text("<annotation/>")
    chosen = {p.name for p in real_tiles.training_photos(tmp_path)}
    assert chosen == {f"IMG_{i}.JPG" for i in range(9) if i % 3}


def test_tiles_keep_labels_on_their_boxes():
    rgb = np.zeros((500, 380, 3), np.uint8)
    rgb[100:140, 50:70] = 255  # the "index"
    tiles = real_tiles.cut_tiles(rgb, np.array([[50.0, 100.0, 70.0, 140.0]]), 320, 8,
                                 np.random.default_rng(0))
    assert len(tiles) == 8
    for crop, lines in tiles:
        assert crop.shape == (320, 320, 3)
        for line in lines:  # each label box covers white pixels only
            _, cx, cy, w, h = map(float, line.split())
            x1, y1 = int((cx - w / 2) * 320) + 2, int((cy - h / 2) * 320) + 2
            x2, y2 = int((cx + w / 2) * 320) - 2, int((cy + h / 2) * 320) - 2
            assert crop[y1:y2, x1:x2].min() > 200
    assert any(lines for _, lines in tiles)


def test_refuses_a_test_folder(tmp_path: Path):
    folder = tmp_path / "images" / "test"
    folder.mkdir(parents=True)
    assert real_tiles.main(["--real", str(folder), "--out", str(tmp_path / "out")]) == 2
