"""The layout-miss analysis names what became of a meld's missed cards."""

from __future__ import annotations

import numpy as np
import pytest

from bench.layout_misses import explain_scene
from datasets.groundtruth import column, corners_from_scene, scene_from_placements
from scanner.corners import Corners
from scanner.reconstruct import read_table

W, H = 4000, 3000


def _scene():
    kings = column(["KH", "KS", "KD", "KC"], 1000, 1500, team=0, meld=0)
    queens = column(["QH", "QS", "QD"], 1600, 1500, team=0, meld=1)
    scene = scene_from_placements(kings + queens, W, H)
    scene["melds"] = [
        {"team": 0, "meld": 0, "rank": "K", "naturals": 4, "wilds": [], "squared": False,
         "card_ids": [0, 1, 2, 3]},
        {"team": 0, "meld": 1, "rank": "Q", "naturals": 3, "wilds": [], "squared": False,
         "card_ids": [4, 5, 6]}]
    return scene


@pytest.mark.parametrize("confidence, state", [(None, "not_detected"), (0.1, "below_floor"),
                                               (0.35, "unsure_unused")])
def test_the_front_card_s_fate_is_named(confidence, state):
    # the whole card in front of a column of four kings, missed three ways (the layout
    # here takes no unsure corner: 0.35 lies between the floor and the gate, unused)
    scene = _scene()
    corners = corners_from_scene(scene, np.random.default_rng(0))
    front = [i for i, b in enumerate(corners.boxes)
             if any(np.allclose(b, ix["box"], atol=1e-3) for ix in scene["cards"][3]["indices"])]
    assert len(front) == 2  # the whole card in front shows both its indices
    keep = np.ones(len(corners), bool)
    conf = corners.confidence.copy()
    if confidence is None:
        keep[front] = False
    else:
        conf[front] = confidence
    corners = Corners(corners.boxes[keep], corners.class_ids[keep], conf[keep],
                      corners.angle[keep])
    reading = read_table(corners, (W, H), min_confidence=0.4)
    counts, lines = explain_scene(scene, corners, reading, 0.25, 0.4)
    assert counts["meld:naturals_short"] == 1 and counts["meld:missing"] == 0
    assert counts[f"missed:{state}"] == 1 and counts["where:last"] == 1
    assert sum(v for k, v in counts.items() if k.startswith("missed:")) == 1
    assert len(lines) == 1 and lines[0].startswith(" team 0 K: naturals_short")
