"""bench_sixnine scores the 6/9 reader's split against each true 6 and 9 index."""

from __future__ import annotations

import json

import numpy as np
from PIL import Image

from bench import bench_sixnine
from scanner.detector import OnnxDetector


def _scenes(tmp_path):
    """One photo with two 6s and one 9 of one design, and a 9 of another."""
    Image.new("RGB", (400, 300), (40, 120, 60)).save(tmp_path / "scene_000001.jpg")
    def card(rank, design, x):
        return {"rank": rank, "design": design, "face_up": True,
                "indices": [{"box": [x, 50, x + 20, 80], "visible": 1.0},
                            {"box": [x, 150, x + 20, 180], "visible": 0.2}]}  # hidden: not counted
    scene = {"image": {"file": "scene_000001.jpg", "width": 400, "height": 300},
             "cards": [card("6", "a", 20), card("6", "a", 80), card("9", "a", 140),
                       card("9", "b", 200), card("K", "b", 260)]}
    (tmp_path / "scene_000001.json").write_text(json.dumps(scene))
    return tmp_path


def test_a_reader_that_always_says_nine_is_right_on_the_nines_only(tmp_path, monkeypatch):
    detector = OnnxDetector()
    monkeypatch.setattr(bench_sixnine, "nine_shares", lambda det, rgb, boxes: np.full(len(boxes), 0.9))
    out = bench_sixnine.evaluate(detector, _scenes(tmp_path))
    assert out["indices"] == 4
    assert out["right"] == 0.5
    assert out["per_design"] == {"a": {"indices": 3, "right": round(1 / 3, 4)},
                                 "b": {"indices": 1, "right": 1.0}}


def test_the_shipped_reader_gives_shares_between_nought_and_one(tmp_path):
    detector = OnnxDetector()
    shares = bench_sixnine.nine_shares(detector, np.full((300, 400, 3), 200, np.uint8),
                                       np.array([[20, 50, 40, 80], [80, 50, 100, 80]], np.float32))
    assert shares.shape == (2,) and ((shares >= 0) & (shares <= 1)).all()
