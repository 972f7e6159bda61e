"""Scenes as photographed another way, for the benchmarks: from a player's seat."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from datasets.groundtruth import keystone_scene

SCENE = Path(__file__).resolve().parent.parent / "fixtures" / "detector" / "scene.json"


@pytest.fixture(scope="module")
def scene() -> dict:
    return json.loads(SCENE.read_text())


def test_a_keystone_keeps_the_near_edge_and_shrinks_the_far_one(scene: dict) -> None:
    out, warp = keystone_scene(scene, 0.5)
    w, h = scene["image"]["width"], scene["image"]["height"]
    corners = cv2.perspectiveTransform(
        np.float64([[0, 0], [w, 0], [w, h], [0, h]]).reshape(-1, 1, 2), warp)[:, 0]
    assert np.allclose(corners, [[w / 4, h / 10], [3 * w / 4, h / 10], [w, h], [0, h]])
    assert scene["cards"][0]["indices"][0]["box"] != out["cards"][0]["indices"][0]["box"]
    near, far = [], []
    for before, after in zip(scene["cards"], out["cards"], strict=True):
        for a, b in zip(before["indices"], after["indices"], strict=True):
            assert b["box"][0] < b["box"][2] and b["box"][1] < b["box"][3]
            # each box is where its quad went, and holds its moved centre
            x1, y1, x2, y2 = a["box"]
            quad = a.get("quad") or [[x1, y1], [x2, y1], [x2, y2], [x1, y2]]
            moved = cv2.perspectiveTransform(np.float64(quad).reshape(-1, 1, 2), warp)[:, 0]
            assert np.allclose(b["box"], [*moved.min(axis=0), *moved.max(axis=0)], atol=0.01)
            # a box near the far edge shrinks, one at the near edge keeps its size
            ratio = (b["box"][2] - b["box"][0]) / (a["box"][2] - a["box"][0])
            (near if a["box"][3] > 0.9 * h else far if a["box"][1] < 0.2 * h else []).append(ratio)
            # directions turn a little at most, towards the vanishing point
            d = (b["angle"] - a["angle"] + 180) % 360 - 180
            assert abs(d) < 30, (a["angle"], b["angle"])
    assert far and near and max(far) < 0.75 < min(near)


def test_a_full_width_far_edge_only_squeezes_the_height(scene: dict) -> None:
    out, _ = keystone_scene(scene, 1.0)
    h = scene["image"]["height"]
    for before, after in zip(scene["cards"], out["cards"], strict=True):
        for a, b in zip(before["indices"], after["indices"], strict=True):
            assert np.allclose([b["box"][0], b["box"][2]], [a["box"][0], a["box"][2]], atol=0.01)
            assert np.allclose([b["box"][1], b["box"][3]],
                               [0.1 * h + 0.9 * a["box"][1], 0.1 * h + 0.9 * a["box"][3]],
                               atol=0.01)
            assert abs((b["angle"] - a["angle"] + 180) % 360 - 180) < 3
    assert scene == json.loads(SCENE.read_text())  # the input is left as it was


def test_the_photo_from_a_seat_is_warped_like_its_boxes(tmp_path: Path) -> None:
    from datasets.groundtruth import seat_photo

    img = np.full((300, 400, 3), 255, np.uint8)
    img[40:80, 20:60] = (0, 0, 0)  # a dark square near the top-left corner
    path = tmp_path / "p.png"
    cv2.imwrite(str(path), img)
    scene = {"image": {"width": 400, "height": 300},
             "cards": [{"indices": [{"box": [20, 40, 60, 80], "angle": 0.0}]}]}
    moved, warp = keystone_scene(scene, 0.5)
    out = cv2.imdecode(np.frombuffer(seat_photo(path, 0, warp), np.uint8), cv2.IMREAD_GRAYSCALE)
    assert out.shape == (300, 400)
    ys, xs = np.nonzero(out < 50)  # the square (the border the warp leaves is 90)
    x1, y1, x2, y2 = moved["cards"][0]["indices"][0]["box"]
    assert abs(xs.min() - x1) < 3 and abs(xs.max() + 1 - x2) < 3
    assert abs(ys.min() - y1) < 3 and abs(ys.max() + 1 - y2) < 3
    # turned first: a quarter turn counter-clockwise puts the square at the bottom-left
    turned = seat_photo(path, 1, np.eye(3))
    out = cv2.imdecode(np.frombuffer(turned, np.uint8), cv2.IMREAD_GRAYSCALE)
    ys, xs = np.nonzero(out < 50)  # the square (the border the warp leaves is 90)
    assert out.shape == (400, 300) and xs.max() < 100 and ys.min() > 300


def test_a_turned_scene_turns_its_quads_with_its_boxes(scene: dict) -> None:
    """Turned a quarter (a photo from the side), every index's quad stays around its box,
    so a seat's warp of the turned scene moves the boxes where the turned photo's indices
    went; four turns give the scene back."""
    import copy

    from datasets.groundtruth import turn_scene

    scene = copy.deepcopy(scene)
    for card in scene["cards"]:  # a quad (the printed index's outline) inside each box
        for index in card.get("indices", []):
            x1, y1, x2, y2 = index["box"]
            mx, my = (x2 - x1) / 4, (y2 - y1) / 4
            index["quad"] = [[x1 + mx, y1], [x2, y1 + my], [x2 - mx, y2], [x1, y2 - my]]
    once = turn_scene(scene, 1)
    for card in once["cards"]:
        for index in card.get("indices", []):
            if "quad" in index:
                q = np.asarray(index["quad"])
                x1, y1, x2, y2 = index["box"]
                assert np.allclose([*q.min(axis=0), *q.max(axis=0)], [x1, y1, x2, y2], atol=0.02)
    back = turn_scene(turn_scene(turn_scene(once, 1), 1), 1)
    for a, b in zip(scene["cards"], back["cards"], strict=True):
        for i, j in zip(a.get("indices", []), b.get("indices", []), strict=True):
            assert np.allclose(i["box"], j["box"], atol=0.01)
            if "quad" in i:
                assert np.allclose(i["quad"], j["quad"], atol=0.05)
