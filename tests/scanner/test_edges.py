"""A direction read a few degrees off is turned onto the lines along its card."""
import json
import shutil

import cv2
import numpy as np
import pytest

from scanner.edges import card_edge_angles


def _off(a: float, b: float) -> float:
    return abs((a - b + 180) % 360 - 180)


def _card_photo(angle: float, slant: float = 0.0, size: int = 240
                ) -> tuple[np.ndarray, np.ndarray]:
    """A white card turned `angle` degrees (clockwise, our convention) on a dark table, a
    dark upright stroke (a rank's) in its top-left corner; `slant` degrees tip its short
    edges off square (a photo taken at a slant). Returns the photo and that index's box."""
    rgb = np.full((size, size, 3), 40, np.uint8)
    centre = np.array([size / 2, size / 2])
    t = np.radians(angle)
    right, down = np.array([np.cos(t), np.sin(t)]), np.array([-np.sin(t), np.cos(t)])
    tip = np.tan(np.radians(slant))

    def at(x: float, y: float) -> np.ndarray:  # card frame (from its centre) -> photo
        return centre + x * right + (y + tip * x) * down

    card = np.array([at(-50, -70), at(50, -70), at(50, 70), at(-50, 70)], np.int32)
    cv2.fillPoly(rgb, [card], (235, 235, 230), cv2.LINE_AA)
    stroke = np.array([at(-41, -64), at(-35, -64), at(-35, -44), at(-41, -44)], np.int32)
    cv2.fillPoly(rgb, [stroke], (30, 30, 30), cv2.LINE_AA)
    corner = at(-37, -54)
    box = np.array([[corner[0] - 12, corner[1] - 12, corner[0] + 12, corner[1] + 12]])
    return rgb, box


@pytest.mark.parametrize("truth", [0.0, 12.0, 187.0, 301.0])
def test_a_reading_a_few_degrees_off_is_turned_onto_the_card(truth):
    rgb, box = _card_photo(truth)
    for off in (-11.0, 7.0, 16.0):
        got = card_edge_angles(rgb, box, np.array([truth + off]))[0]
        assert _off(got, truth) < 1.5, (truth, off, got)


def test_the_long_edges_decide_when_the_short_ones_are_not_square():
    # a photo at a slant: the card's short edges 12 degrees off square to its long ones
    rgb, box = _card_photo(25.0, slant=12.0)
    got = card_edge_angles(rgb, box, np.array([31.0]))[0]
    assert _off(got, 25.0) < 2.0, got  # the mean of all four edges' directions: 3.3 off


def test_a_turn_past_the_cap_is_not_made_and_unknown_stays_unknown():
    rgb, box = _card_photo(20.0)
    assert card_edge_angles(rgb, box, np.array([31.0]), max_turn=5.0)[0] == pytest.approx(31.0)
    assert np.isnan(card_edge_angles(rgb, box, np.array([np.nan]))[0])


def test_no_lines_no_turn():
    flat = np.full((200, 200, 3), 120, np.uint8)  # no gradient at all
    box = np.array([[90.0, 90.0, 110.0, 110.0]])
    assert card_edge_angles(flat, box, np.array([13.0]))[0] == pytest.approx(13.0)
    # noise pulls a reading by about a degree, not onto a line of its own
    noise = np.random.default_rng(0).integers(0, 255, (200, 200, 3), dtype=np.uint8)
    assert _off(card_edge_angles(noise, box, np.array([13.0]))[0], 13.0) < 3.0


def test_the_detector_applies_it_only_when_its_settings_say_so(tmp_path):
    from scanner.detector import MODELS_DIR, OnnxDetector

    assert json.loads((MODELS_DIR / "detector.json").read_text())["runtime"]["edge_angles"]
    assert OnnxDetector(MODELS_DIR).edge_angles
    for f in MODELS_DIR.iterdir():
        shutil.copy(f, tmp_path / f.name)
    cfg = json.loads((tmp_path / "detector.json").read_text())
    cfg["runtime"]["edge_angles"] = False
    (tmp_path / "detector.json").write_text(json.dumps(cfg))
    assert not OnnxDetector(tmp_path).edge_angles
    assert OnnxDetector(tmp_path, edge_angles=True).edge_angles
